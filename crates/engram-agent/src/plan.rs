//! Planning from memory: how many steps tasks in a module really take
//! against the plan (task calibration), the step limit that follows from it, and the
//! sections a planner's context is laid out in.
//!
//! A runtime reports each finished work unit as a [`CalibrationSample`] (planned and actual
//! steps in a module); the running totals per module and methodology are a
//! [`Calibration`]. [`step_limit`] scales a base step limit by the worst overrun among the
//! task's modules, capped at [`MAX_STEP_FACTOR`]; [`PLANNER_SECTIONS`] and
//! [`planner_budget`] lay out the planner's context.

use engram_core::validate::MAX_LABEL_CHARS;
use engram_core::{MemoryType, ValidationError};
use engram_retrieval::packing::PackingBudget;
use serde::{Deserialize, Serialize};

/// The methodology a calibration counts under when the runtime names none.
pub const DEFAULT_METHODOLOGY: &str = "native";
/// The most a calibration may scale a step limit by.
pub const MAX_STEP_FACTOR: f64 = 2.0;
/// Work units a calibration needs before it moves a step limit: one overrun is an accident,
/// three are a habit (the observer's step-overrun signal asks for three sessions too).
pub const MIN_CALIBRATION_SAMPLES: u32 = 3;
/// The most steps a plan or a work unit may report, and the largest step limit.
pub const MAX_STEPS: u32 = 100_000;
/// Most modules one request may name.
pub const MAX_MODULES: usize = 64;
/// The planner context's budget when the request sets none: the define phase's.
pub const PLANNER_BUDGET: u32 = 2500;

/// The planner's sections, in order: the memory type each holds, its heading, and how many
/// memories it is looked up with.
pub const PLANNER_SECTIONS: [(MemoryType, &str, u32); 5] = [
    (
        MemoryType::TaskCalibration,
        "Calibration: actual against planned steps",
        5,
    ),
    (
        MemoryType::DeadEnd,
        "Dead ends: write them into the plan as constraints",
        8,
    ),
    (
        MemoryType::CausalDependency,
        "Coupled files: include them in the scope",
        10,
    ),
    (MemoryType::WorkUnitOutcome, "Recent outcomes", 5),
    (MemoryType::WorkflowRecipe, "Recipes", 2),
];

/// The planner context's budget: `total` tokens (default [`PLANNER_BUDGET`]) with a share
/// reserved for each section, so a long list of coupled files cannot crowd out the dead
/// ends; shares a section leaves unused go to the best remaining memories.
pub fn planner_budget(total: Option<u32>) -> PackingBudget {
    PackingBudget {
        total: total.unwrap_or(PLANNER_BUDGET) as usize,
        allocation: vec![
            (Some(MemoryType::TaskCalibration), 0.10),
            (Some(MemoryType::DeadEnd), 0.25),
            (Some(MemoryType::CausalDependency), 0.20),
            (Some(MemoryType::WorkUnitOutcome), 0.15),
            (Some(MemoryType::WorkflowRecipe), 0.25),
            (None, 0.05),
        ],
    }
}

/// One finished work unit: the steps it was planned to take in a module and the steps it
/// took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CalibrationSample {
    /// The module the work was in (`src/auth`).
    pub module: String,
    /// Steps the plan gave it (at least 1).
    pub planned_steps: u32,
    /// Steps it took (at least 1).
    pub actual_steps: u32,
    /// The methodology that planned it (default [`DEFAULT_METHODOLOGY`]): plans of
    /// different methodologies count steps differently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methodology: Option<String>,
    /// The session that did the work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl CalibrationSample {
    /// Parses a sample from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<CalibrationSample, ValidationError> {
        engram_core::validate::from_json_checked(json, Self::validate)
    }

    /// Checks the sample's fields.
    pub fn validate(&self) -> Result<(), ValidationError> {
        check_label("module", &self.module)?;
        if let Some(methodology) = &self.methodology {
            check_label("methodology", methodology)?;
        }
        if let Some(session) = &self.session_id {
            check_label("sessionId", session)?;
        }
        for (field, steps) in [
            ("plannedSteps", self.planned_steps),
            ("actualSteps", self.actual_steps),
        ] {
            check_steps(field, steps)?;
        }
        Ok(())
    }

    /// The methodology it counts under.
    pub fn methodology(&self) -> &str {
        methodology_or_default(self.methodology.as_deref())
    }
}

/// What a runtime asks before it runs an agent: how many steps to allow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepLimitRequest {
    /// The limit the runtime would use without memory.
    pub base_max_steps: u32,
    /// The modules the task works in.
    #[serde(default)]
    pub modules: Vec<String>,
    /// The methodology that planned the task (default [`DEFAULT_METHODOLOGY`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methodology: Option<String>,
    /// A hard limit no calibration may exceed (the runtime's absolute maximum).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
}

impl StepLimitRequest {
    /// Parses a request from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<StepLimitRequest, ValidationError> {
        engram_core::validate::from_json_checked(json, Self::validate)
    }

    /// Checks the request's fields.
    pub fn validate(&self) -> Result<(), ValidationError> {
        check_steps("baseMaxSteps", self.base_max_steps)?;
        if let Some(max) = self.max_steps {
            check_steps("maxSteps", max)?;
        }
        check_modules(&self.modules)?;
        if let Some(methodology) = &self.methodology {
            check_label("methodology", methodology)?;
        }
        Ok(())
    }

    /// The methodology it asks about.
    pub fn methodology(&self) -> &str {
        methodology_or_default(self.methodology.as_deref())
    }
}

/// How many steps tasks in one module take against their plans, over every work unit
/// reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Calibration {
    /// The module.
    pub module: String,
    /// The methodology whose plans it measures.
    pub methodology: String,
    /// Work units reported.
    pub samples: u32,
    /// Planned steps per work unit, on average.
    pub mean_planned_steps: f64,
    /// Actual steps per work unit, on average.
    pub mean_actual_steps: f64,
    /// Actual over planned steps, over all work units (above 1: plans underestimate).
    pub ratio: f64,
    /// The `task_calibration` memory that says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_id: Option<String>,
}

impl Calibration {
    /// The calibration of `samples` work units that were planned `planned` steps and took
    /// `actual` steps in all.
    pub fn from_totals(
        module: &str,
        methodology: &str,
        samples: u32,
        planned: u64,
        actual: u64,
    ) -> Calibration {
        let per_unit = |total: u64| total as f64 / f64::from(samples.max(1));
        Calibration {
            module: module.to_owned(),
            methodology: methodology.to_owned(),
            samples,
            mean_planned_steps: per_unit(planned),
            mean_actual_steps: per_unit(actual),
            ratio: actual as f64 / planned.max(1) as f64,
            memory_id: None,
        }
    }

    /// The memory's text: what the ratio means for the next plan.
    pub fn text(&self) -> String {
        let advice = if self.ratio >= 1.05 {
            "plan for more"
        } else if self.ratio <= 0.95 {
            "plans here overestimate"
        } else {
            "plans here hold"
        };
        format!(
            "Work in `{}` takes {:.2}× the planned steps: {:.1} steps against {:.1} planned, \
over {} work unit{} ({} plans); {advice}.",
            self.module,
            self.ratio,
            self.mean_actual_steps,
            self.mean_planned_steps,
            self.samples,
            if self.samples == 1 { "" } else { "s" },
            self.methodology,
        )
    }

    /// How far the memory is to be trusted: a ratio from more work units is steadier.
    pub fn confidence(&self) -> f64 {
        (0.6 + 0.1 * f64::from(self.samples.min(MIN_CALIBRATION_SAMPLES))).min(0.9)
    }
}

/// The step limit for a task, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepLimit {
    /// The steps to allow.
    pub max_steps: u32,
    /// The runtime's base limit.
    pub base_max_steps: u32,
    /// What the base was scaled by (1 when no calibration applies).
    pub factor: f64,
    /// The calibration that set the factor, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// Why, in a sentence.
    pub reason: String,
}

/// The step limit for `request` given the calibrations of its modules: the base scaled by
/// the highest ratio among calibrations of the request's methodology with at least
/// [`MIN_CALIBRATION_SAMPLES`] work units, at most [`MAX_STEP_FACTOR`] and at most the
/// request's `max_steps`.
///
/// A ratio below 1 leaves the base alone: a step limit is a stop condition, and work that
/// usually finishes early is no reason to cut off the unit that does not.
///
/// ```
/// use engram_agent::plan::{step_limit, Calibration, StepLimitRequest};
///
/// let request = StepLimitRequest {
///     base_max_steps: 20,
///     modules: vec!["src/auth".into()],
///     methodology: None,
///     max_steps: None,
/// };
/// let auth = Calibration::from_totals("src/auth", "native", 4, 40, 64);
/// let limit = step_limit(&request, &[auth]);
/// assert_eq!((limit.max_steps, limit.factor), (32, 1.6));
/// ```
pub fn step_limit(request: &StepLimitRequest, calibrations: &[Calibration]) -> StepLimit {
    let base = request.base_max_steps;
    let applicable = calibrations
        .iter()
        .filter(|c| {
            c.methodology == request.methodology()
                && request.modules.iter().any(|m| m.trim() == c.module)
                && c.samples >= MIN_CALIBRATION_SAMPLES
        })
        .max_by(|a, b| a.ratio.total_cmp(&b.ratio));
    let cap = request.max_steps.unwrap_or(MAX_STEPS);
    let Some(calibration) = applicable.filter(|c| c.ratio > 1.0) else {
        let reason = match applicable {
            Some(c) => format!(
                "`{}` finishes within its plans ({:.2}×); the base limit stands",
                c.module, c.ratio
            ),
            None => format!(
                "no module of the task has {MIN_CALIBRATION_SAMPLES} calibrated work units; \
the base limit stands"
            ),
        };
        return StepLimit {
            max_steps: base.min(cap),
            base_max_steps: base,
            factor: 1.0,
            calibration: None,
            reason,
        };
    };
    let factor = calibration.ratio.min(MAX_STEP_FACTOR);
    let scaled = (f64::from(base) * factor).ceil().min(f64::from(MAX_STEPS)) as u32;
    let capped = if factor < calibration.ratio {
        format!(" (capped at {MAX_STEP_FACTOR}×)")
    } else {
        String::new()
    };
    StepLimit {
        max_steps: scaled.min(cap),
        base_max_steps: base,
        factor,
        reason: format!(
            "work in `{}` takes {:.2}× its planned steps over {} work units; the base limit \
is scaled by {factor:.2}{capped}",
            calibration.module, calibration.ratio, calibration.samples
        ),
        calibration: Some(calibration.clone()),
    }
}

/// The methodology a request or sample names, or [`DEFAULT_METHODOLOGY`] when it names none
/// (or only whitespace).
pub fn methodology_or_default(methodology: Option<&str>) -> &str {
    methodology
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .unwrap_or(DEFAULT_METHODOLOGY)
}

/// Checks a name a request carries (a module, a methodology, a session id): not empty, at
/// most [`MAX_LABEL_CHARS`] characters.
pub fn check_label(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        return Err(ValidationError::field(field, "must not be empty"));
    }
    let chars = value.chars().count();
    if chars > MAX_LABEL_CHARS {
        return Err(ValidationError::field(
            field,
            format!("is {chars} characters; the limit is {MAX_LABEL_CHARS}"),
        ));
    }
    Ok(())
}

fn check_steps(field: &str, steps: u32) -> Result<(), ValidationError> {
    if !(1..=MAX_STEPS).contains(&steps) {
        return Err(ValidationError::field(
            field,
            format!("must be from 1 to {MAX_STEPS}, got {steps}"),
        ));
    }
    Ok(())
}

/// Checks a request's module list: at most [`MAX_MODULES`] names, none empty or too long.
pub fn check_modules(modules: &[String]) -> Result<(), ValidationError> {
    if modules.len() > MAX_MODULES {
        return Err(ValidationError::field(
            "modules",
            format!("must have at most {MAX_MODULES} entries"),
        ));
    }
    for (i, module) in modules.iter().enumerate() {
        check_label(&format!("modules[{i}]"), module)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(base: u32, modules: &[&str]) -> StepLimitRequest {
        StepLimitRequest {
            base_max_steps: base,
            modules: modules.iter().map(|m| (*m).to_owned()).collect(),
            methodology: None,
            max_steps: None,
        }
    }

    #[test]
    fn totals_give_means_and_the_pooled_ratio() {
        let c = Calibration::from_totals("src/db", "native", 4, 30, 45);
        assert_eq!((c.mean_planned_steps, c.mean_actual_steps), (7.5, 11.25));
        assert_eq!(c.ratio, 1.5);
        assert_eq!(
            c.text(),
            "Work in `src/db` takes 1.50× the planned steps: 11.2 steps against 7.5 planned, \
over 4 work units (native plans); plan for more."
        );
        let one = Calibration::from_totals("ui", "bmad", 1, 10, 8);
        assert!(one
            .text()
            .contains("over 1 work unit (bmad plans); plans here overestimate"));
        assert!(one.confidence() < c.confidence());
        assert!(c.confidence() <= 0.9);
    }

    #[test]
    fn the_worst_calibrated_module_scales_the_limit() {
        let calibrations = [
            Calibration::from_totals("a", "native", 3, 30, 36),
            Calibration::from_totals("b", "native", 5, 50, 75),
            // Too few work units to count, however bad.
            Calibration::from_totals("c", "native", 2, 10, 40),
            // Another methodology's plans.
            Calibration::from_totals("a", "tdd", 9, 10, 19),
        ];
        let limit = step_limit(&request(10, &["a", "b", "c"]), &calibrations);
        assert_eq!((limit.max_steps, limit.factor), (15, 1.5));
        assert_eq!(
            limit.calibration.as_ref().map(|c| c.module.as_str()),
            Some("b")
        );
        // A module the task does not name does not count.
        let limit = step_limit(&request(10, &["a"]), &calibrations);
        assert_eq!(limit.max_steps, 12);
        let mut tdd = request(10, &["a"]);
        tdd.methodology = Some("tdd".into());
        assert_eq!(step_limit(&tdd, &calibrations).max_steps, 19);
    }

    #[test]
    fn the_factor_is_capped_and_never_below_one() {
        let slow = [Calibration::from_totals("a", "native", 3, 10, 50)];
        let limit = step_limit(&request(7, &["a"]), &slow);
        assert_eq!((limit.max_steps, limit.factor), (14, MAX_STEP_FACTOR));
        assert!(limit.reason.contains("capped at 2×"), "{}", limit.reason);
        let mut capped = request(7, &["a"]);
        capped.max_steps = Some(9);
        assert_eq!(step_limit(&capped, &slow).max_steps, 9);

        let fast = [Calibration::from_totals("a", "native", 3, 30, 15)];
        let limit = step_limit(&request(7, &["a"]), &fast);
        assert_eq!((limit.max_steps, limit.factor), (7, 1.0));
        assert!(limit.calibration.is_none());
        assert!(
            limit.reason.contains("within its plans"),
            "{}",
            limit.reason
        );
        let none = step_limit(&request(7, &[]), &[]);
        assert_eq!(none.max_steps, 7);
        assert!(none.reason.starts_with("no module"), "{}", none.reason);
    }

    #[test]
    fn bad_requests_name_their_field() {
        let field = |json: &str| {
            StepLimitRequest::from_json(json)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(field(r#"{"baseMaxSteps":0}"#).contains("baseMaxSteps"));
        assert!(field(r#"{"baseMaxSteps":5,"maxSteps":0}"#).contains("maxSteps"));
        assert!(field(r#"{"baseMaxSteps":5,"modules":[""]}"#).contains("modules[0]"));
        assert!(field(r#"{"baseMaxSteps":5,"limit":3}"#).contains("limit"));
        let sample = |json: &str| {
            CalibrationSample::from_json(json)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(sample(r#"{"module":" ","plannedSteps":3,"actualSteps":4}"#).contains("module"));
        assert!(
            sample(r#"{"module":"a","plannedSteps":3,"actualSteps":100001}"#)
                .contains("actualSteps")
        );
        let ok = CalibrationSample::from_json(r#"{"module":"a","plannedSteps":3,"actualSteps":4}"#);
        assert_eq!(
            ok.map(|s| s.methodology().to_owned()).ok(),
            Some("native".into())
        );
    }
}
