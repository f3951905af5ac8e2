//! Context packing: selected memories become one block of text
//! that fits a token budget, with per-phase budgets and per-type allocations, clustered by
//! file, each memory ending in a citation chip `[Memory #id: citation]`.

use std::collections::HashMap;

use engram_core::{quote, MemoryType, Phase};
use serde::Serialize;

use crate::candidate::Candidate;
use crate::tokens::estimate;

/// Budget when no phase is given.
pub const DEFAULT_BUDGET: usize = 3000;

/// A token budget and how it is shared between memory types.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackingBudget {
    /// Most tokens the packed text may cost (by [`estimate`]).
    pub total: usize,
    /// Share of `total` reserved for each type in a first pass; `None` is every other type.
    /// Shares unused in the first pass go to the best remaining memories in a second.
    pub allocation: Vec<(Option<MemoryType>, f64)>,
}

impl PackingBudget {
    /// Seeds 000 §7's budget for `phase`; without a phase, [`DEFAULT_BUDGET`] shared freely.
    pub fn for_phase(phase: Option<Phase>) -> Self {
        use MemoryType::*;
        let (total, shares): (usize, &[(Option<MemoryType>, f64)]) = match phase {
            None => (DEFAULT_BUDGET, &[(None, 1.0)]),
            Some(Phase::Define) => (
                2500,
                &[
                    (Some(WorkflowRecipe), 0.30),
                    (Some(Requirement), 0.20),
                    (Some(Decision), 0.20),
                    (Some(DeadEnd), 0.15),
                    (Some(TaskCalibration), 0.10),
                    (None, 0.05),
                ],
            ),
            Some(Phase::Implement) => (
                3000,
                &[
                    (Some(Gotcha), 0.30),
                    (Some(ErrorPattern), 0.25),
                    (Some(CausalDependency), 0.15),
                    (Some(Pattern), 0.15),
                    (Some(DeadEnd), 0.10),
                    (None, 0.05),
                ],
            ),
            Some(Phase::Validate) => (
                2500,
                &[
                    (Some(ErrorPattern), 0.30),
                    (Some(Requirement), 0.25),
                    (Some(E2eObservation), 0.25),
                    (Some(WorkUnitOutcome), 0.15),
                    (None, 0.05),
                ],
            ),
            Some(Phase::Refine) => (
                2000,
                &[
                    (Some(ErrorPattern), 0.35),
                    (Some(Gotcha), 0.25),
                    (Some(DeadEnd), 0.20),
                    (Some(Pattern), 0.15),
                    (None, 0.05),
                ],
            ),
            Some(Phase::Explore) => (
                2000,
                &[
                    (Some(ModuleInsight), 0.40),
                    (Some(Decision), 0.25),
                    (Some(Pattern), 0.20),
                    (Some(CausalDependency), 0.15),
                ],
            ),
            Some(Phase::Reflect) => (
                1500,
                &[
                    (Some(WorkUnitOutcome), 0.40),
                    (Some(TaskCalibration), 0.35),
                    (Some(DeadEnd), 0.15),
                    (None, 0.10),
                ],
            ),
        };
        PackingBudget {
            total,
            allocation: shares.to_vec(),
        }
    }

    /// The same shares with another total.
    pub fn with_total(mut self, total: usize) -> Self {
        self.total = total;
        self
    }

    fn share(&self, memory_type: MemoryType) -> f64 {
        self.allocation
            .iter()
            .find(|(t, _)| *t == Some(memory_type))
            .or_else(|| self.allocation.iter().find(|(t, _)| t.is_none()))
            .map_or(0.0, |(_, s)| *s)
    }
}

/// One memory in the packed text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackedItem {
    /// Memory id.
    pub id: String,
    /// Its type.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// The file cluster it was placed in, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Tokens its entry costs.
    pub tokens: usize,
}

/// Memories packed into a budget.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackedContext {
    /// The text to hand to the model.
    pub text: String,
    /// What went in, in text order.
    pub items: Vec<PackedItem>,
    /// Tokens the text costs (by [`estimate`]); never more than `budget`.
    pub tokens: usize,
    /// The budget.
    pub budget: usize,
    /// Memories left out for lack of room, best first.
    pub omitted: Vec<String>,
}

/// One memory as a line of the packed text: `- [type] content [Memory #id: citation]`.
pub fn entry(candidate: &Candidate) -> String {
    let m = &candidate.memory;
    let review = if m.flags.needs_review {
        " (needs review)"
    } else {
        ""
    };
    // Content is quoted: it must not pose as a chip, a heading or a prompt tag.
    format!(
        "- [{}]{review} {} [Memory #{}: {}]\n",
        m.memory_type,
        quote::for_prompt(m.content.trim()),
        m.id,
        quote::chip_text(&m.citation())
    )
}

/// Packs ranked `results` into `budget`, clustered by file.
pub fn pack(results: &[Candidate], budget: &PackingBudget) -> PackedContext {
    fit(results, budget, render_by_file)
}

/// Packs ranked `results` into `budget` like [`pack`], but lays them out in `sections`: one
/// per memory type, in the order given, under its heading (`## heading`), each keeping the
/// ranked order; memories of types no section names come last, under no heading. Empty
/// sections are left out.
///
/// ```
/// use engram_core::MemoryType;
/// use engram_retrieval::packing::{pack_in_sections, PackingBudget};
///
/// let sections = [(MemoryType::DeadEnd, "Dead ends")];
/// let packed = pack_in_sections(&[], &PackingBudget::for_phase(None), &sections);
/// assert!(packed.text.is_empty());
/// ```
pub fn pack_in_sections(
    results: &[Candidate],
    budget: &PackingBudget,
    sections: &[(MemoryType, &str)],
) -> PackedContext {
    fit(results, budget, |results, chosen, costs, total| {
        let section_of = |t: MemoryType| sections.iter().position(|(s, _)| *s == t);
        let mut groups: Vec<(Option<usize>, Vec<usize>)> = Vec::new();
        for (i, candidate) in results.iter().enumerate() {
            if !chosen[i] {
                continue;
            }
            let section = section_of(candidate.memory.memory_type);
            match groups.iter_mut().find(|(s, _)| *s == section) {
                Some((_, members)) => members.push(i),
                None => groups.push((section, vec![i])),
            }
        }
        groups.sort_by_key(|(section, _)| section.unwrap_or(usize::MAX));
        let layout = groups
            .into_iter()
            .map(|(section, members)| (section.map(|s| sections[s].1.to_owned()), members));
        render(results, layout, chosen, costs, total, false)
    })
}

/// Chooses entries by type shares, then best first, and drops the worst chosen entry until
/// the rendered text (headings included) fits.
fn fit(
    results: &[Candidate],
    budget: &PackingBudget,
    render: impl Fn(&[Candidate], &[bool], &[usize], usize) -> PackedContext,
) -> PackedContext {
    let costs: Vec<usize> = results.iter().map(|c| estimate(&entry(c))).collect();
    let mut chosen = vec![false; results.len()];
    let mut used = 0usize;
    // First pass: each type within its share.
    let mut spent: HashMap<MemoryType, usize> = HashMap::new();
    for (i, candidate) in results.iter().enumerate() {
        let t = candidate.memory.memory_type;
        let cap = (budget.share(t) * budget.total as f64).floor() as usize;
        let type_spent = spent.get(&t).copied().unwrap_or(0);
        if type_spent + costs[i] <= cap && used + costs[i] <= budget.total {
            chosen[i] = true;
            used += costs[i];
            *spent.entry(t).or_default() += costs[i];
        }
    }
    // Second pass: what is left, best first.
    for i in 0..results.len() {
        if !chosen[i] && used + costs[i] <= budget.total {
            chosen[i] = true;
            used += costs[i];
        }
    }
    // Headers cost tokens too: drop the worst chosen entry until the text fits.
    loop {
        let packed = render(results, &chosen, &costs, budget.total);
        if packed.tokens <= budget.total {
            return packed;
        }
        match chosen.iter().rposition(|c| *c) {
            Some(worst) => chosen[worst] = false,
            None => return render(results, &chosen, &costs, budget.total),
        }
    }
}

/// The heading of the memories about no file, after the files' clusters: without it they
/// would read as more about the file above them.
pub const NO_FILE_HEADING: &str = "Project-wide";

/// Renders chosen entries clustered by their first file (clusters in order of their best
/// member; memories without a file last, under [`NO_FILE_HEADING`] when any file's cluster
/// comes before them).
fn render_by_file(
    results: &[Candidate],
    chosen: &[bool],
    costs: &[usize],
    total: usize,
) -> PackedContext {
    let mut clusters: Vec<(Option<String>, Vec<usize>)> = Vec::new();
    for (i, candidate) in results.iter().enumerate() {
        if !chosen[i] {
            continue;
        }
        let file = candidate.memory.related_files.first().cloned();
        match clusters.iter_mut().find(|(f, _)| *f == file) {
            Some((_, members)) => members.push(i),
            None => clusters.push((file, vec![i])),
        }
    }
    clusters.sort_by_key(|(file, members)| (file.is_none(), members[0]));
    let any_file = clusters.iter().any(|(file, _)| file.is_some());
    let headed = clusters.into_iter().map(|(file, members)| match file {
        Some(file) => (Some(file), members),
        None => (any_file.then(|| NO_FILE_HEADING.to_owned()), members),
    });
    render(results, headed, chosen, costs, total, true)
}

/// Renders `groups` of chosen entries in order, each under its heading if it has one
/// (`files`: each item is placed in its first file, the heading of its group).
fn render(
    results: &[Candidate],
    groups: impl IntoIterator<Item = (Option<String>, Vec<usize>)>,
    chosen: &[bool],
    costs: &[usize],
    total: usize,
    files: bool,
) -> PackedContext {
    let mut text = String::new();
    let mut items = Vec::new();
    for (heading, members) in groups {
        if let Some(heading) = &heading {
            text.push_str(&format!("## {heading}\n"));
        }
        for i in members {
            text.push_str(&entry(&results[i]));
            items.push(PackedItem {
                id: results[i].memory.id.clone(),
                memory_type: results[i].memory.memory_type,
                file: results[i]
                    .memory
                    .related_files
                    .first()
                    .cloned()
                    .filter(|_| files),
                tokens: costs[i],
            });
        }
    }
    let omitted = results
        .iter()
        .zip(chosen)
        .filter(|(_, c)| !**c)
        .map(|(r, _)| r.memory.id.clone())
        .collect();
    PackedContext {
        tokens: estimate(&text),
        text,
        items,
        budget: total,
        omitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::test_support::fake_memory;

    fn candidate(id: &str, t: MemoryType, file: Option<&str>, words: usize) -> Candidate {
        let mut m = fake_memory(id, &"word ".repeat(words));
        m.memory_type = t;
        m.related_files = file.into_iter().map(String::from).collect();
        m.citation_text = Some(format!("cite {id}"));
        Candidate::new(m)
    }

    #[test]
    fn never_exceeds_the_budget() {
        let results: Vec<Candidate> = (0..40)
            .map(|i| {
                let t = [
                    MemoryType::Gotcha,
                    MemoryType::ErrorPattern,
                    MemoryType::Decision,
                ][i % 3];
                let file = ["a.rs", "b.rs", "c.rs"].get(i % 4).copied();
                candidate(&format!("m{i}"), t, file, 5 + (i * 7) % 60)
            })
            .collect();
        for total in [0, 1, 10, 50, 100, 333, 1000, 3000, 100_000] {
            for phase in [None, Some(Phase::Implement), Some(Phase::Explore)] {
                let budget = PackingBudget::for_phase(phase).with_total(total);
                let packed = pack(&results, &budget);
                assert!(packed.tokens <= total, "{} > {total}", packed.tokens);
                assert_eq!(packed.tokens, estimate(&packed.text));
                assert_eq!(packed.items.len() + packed.omitted.len(), results.len());
            }
        }
    }

    #[test]
    fn entries_carry_citation_chips_and_cluster_by_file() {
        let results = vec![
            candidate("a", MemoryType::Gotcha, Some("x.rs"), 3),
            candidate("b", MemoryType::Gotcha, Some("y.rs"), 3),
            candidate("c", MemoryType::Gotcha, Some("x.rs"), 3),
            candidate("d", MemoryType::Decision, None, 3),
        ];
        let packed = pack(&results, &PackingBudget::for_phase(None));
        assert_eq!(
            packed.text,
            "## x.rs\n- [gotcha] word word word [Memory #a: cite a]\n\
             - [gotcha] word word word [Memory #c: cite c]\n\
             ## y.rs\n- [gotcha] word word word [Memory #b: cite b]\n\
             ## Project-wide\n- [decision] word word word [Memory #d: cite d]\n"
        );
        assert_eq!(packed.items[3].file, None);
        // Alone, memories about no file need no heading.
        let general = pack(&results[3..], &PackingBudget::for_phase(None));
        assert_eq!(
            general.text,
            "- [decision] word word word [Memory #d: cite d]\n"
        );
    }

    #[test]
    fn sections_group_by_type_in_the_order_given() {
        let results = vec![
            candidate("r", MemoryType::WorkflowRecipe, Some("x.rs"), 3),
            candidate("d1", MemoryType::DeadEnd, Some("y.rs"), 3),
            candidate("g", MemoryType::Gotcha, None, 3),
            candidate("d2", MemoryType::DeadEnd, None, 3),
        ];
        let sections = [
            (MemoryType::DeadEnd, "Dead ends"),
            (MemoryType::CausalDependency, "Coupled files"),
            (MemoryType::WorkflowRecipe, "Recipes"),
        ];
        let packed = pack_in_sections(&results, &PackingBudget::for_phase(None), &sections);
        assert_eq!(
            packed.text,
            "## Dead ends\n- [dead_end] word word word [Memory #d1: cite d1]\n\
             - [dead_end] word word word [Memory #d2: cite d2]\n\
             ## Recipes\n- [workflow_recipe] word word word [Memory #r: cite r]\n\
             - [gotcha] word word word [Memory #g: cite g]\n"
        );
        assert!(packed.items.iter().all(|i| i.file.is_none()));
        for total in [0, 5, 20, 40, 60] {
            let budget = PackingBudget::for_phase(None).with_total(total);
            let packed = pack_in_sections(&results, &budget, &sections);
            assert!(packed.tokens <= total, "{} > {total}", packed.tokens);
            assert_eq!(packed.tokens, estimate(&packed.text));
            assert_eq!(packed.items.len() + packed.omitted.len(), results.len());
        }
    }

    #[test]
    fn type_shares_reserve_room_for_the_phase_types() {
        // Implement: gotchas get 30 % of the budget, decisions fall under "other" (5 %).
        let results = vec![
            candidate("d1", MemoryType::Decision, None, 200),
            candidate("g1", MemoryType::Gotcha, None, 5),
            candidate("g2", MemoryType::Gotcha, None, 5),
        ];
        let (big, small) = (estimate(&entry(&results[0])), estimate(&entry(&results[1])));
        let total = big;
        assert!(total * 3 / 10 >= 2 * small && total < big + 2 * small);
        let implement = PackingBudget::for_phase(Some(Phase::Implement)).with_total(total);
        let packed = pack(&results, &implement);
        let ids: Vec<&str> = packed.items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["g1", "g2"]);
        assert_eq!(packed.omitted, ["d1"]);
        // Without a phase the best memory goes first and fills the budget.
        let free = PackingBudget::for_phase(None).with_total(total);
        let ids: Vec<String> = pack(&results, &free)
            .items
            .into_iter()
            .map(|i| i.id)
            .collect();
        assert_eq!(ids, ["d1"]);
    }
}
