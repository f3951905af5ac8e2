//! The instance side of resident vectors: which ids a search passes into its statement, and
//! how the vector changes the statement returns update the set.

use engram_retrieval::resident::VectorSet;
use engram_store::Value;

use crate::{SearchIntent, SearchQuery};

/// Ids picked from the resident vectors per dense candidate kept when the query filters
/// beyond its project: when fewer than half of them pass the filters and reach the floor
/// (see [`DensePick::floor`]), the statement runs its exact scan. Re-scoring a pick reads
/// its stored vector (two pages at 384 dimensions): at 10K memories a 4× pick made a hybrid
/// search 0.8 ms slower in wasm (Node) than 2×.
pub(super) const RESIDENT_OVERFETCH: usize = 2;

/// The most ids picked per dense candidate kept, when a plateau of near-equal similarities
/// extends the pick (see [`DensePick::from`]).
pub(super) const RESIDENT_PICK_CAP: usize = 8;

/// Most vector changes one search brings in (6 MB at 384 dimensions). A larger backlog, as
/// when the set first loads a big project, arrives over several searches, which use the
/// exact scan until it is in.
pub(crate) const CHANGE_BATCH: usize = 4096;

/// An instance's resident vectors and whether they have caught up with the change log.
#[derive(Debug)]
pub(crate) struct Resident {
    /// The vectors.
    pub(crate) set: VectorSet,
    /// False until a statement returned fewer changes than [`CHANGE_BATCH`]: the set may
    /// then miss vectors, so searches pass no ids and the exact scan answers.
    caught_up: bool,
}

impl Resident {
    /// An empty set of `dims`-long vectors that has not loaded yet.
    pub(crate) fn new(dims: usize) -> Self {
        Resident {
            set: VectorSet::new(dims),
            caught_up: false,
        }
    }

    /// Applies the changes one statement read after the set's position (see
    /// [`apply_changes`]); a full batch means more may be waiting.
    pub(super) fn apply(&mut self, changes: Vec<VectorChange>) {
        self.caught_up = changes.len() < CHANGE_BATCH;
        apply_changes(&mut self.set, changes);
    }
}

/// The ids the resident vectors rank best for one query vector, passed to the statement.
pub(super) struct DensePick {
    pub(super) ids: Vec<String>,
    /// When the pick is full, the lowest similarity picked plus the set's
    /// [`VectorSet::similarity_error`]: no vector left out scores above it exactly. Else −∞.
    pub(super) floor: f32,
    /// The change position of the set the pick came from.
    pub(super) seq: i64,
}

/// How many ids a pick takes: `base`, then on while the similarities stay within twice the
/// bound of the `keep`-th (see [`DensePick::from`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PickSize {
    /// The leading picks that must reach the floor for the pick to count.
    pub(super) keep: usize,
    /// The ids picked before the plateau rule.
    pub(super) base: usize,
}

impl PickSize {
    /// The pick of a query that filters beyond its project: [`RESIDENT_OVERFETCH`] ×
    /// `limit` ids for the best `limit`.
    pub(super) fn overfetched(limit: usize) -> Self {
        PickSize {
            keep: limit,
            base: RESIDENT_OVERFETCH * limit,
        }
    }

    /// The pick for the best `limit` of `query`. A query that filters only by project and
    /// excluded ids passes every picked id (the set holds the project's live memories; one
    /// changed since, the statement sees and re-checks), bar the excluded: `limit` more than
    /// those is enough, half of the [`RESIDENT_OVERFETCH`] pick. Other filters may drop any
    /// pick, so those queries overfetch.
    pub(super) fn for_query(query: &SearchQuery, limit: usize) -> Self {
        let narrowed = query.narrows_by_attribute()
            || query.min_confidence.is_some_and(|c| c > 0.0)
            || query.intent == SearchIntent::AutoInject;
        if narrowed {
            Self::overfetched(limit)
        } else {
            let keep = limit + query.exclude_ids.len();
            PickSize { keep, base: keep }
        }
    }
}

impl DensePick {
    /// The ids of `resident` to re-score for `size` (see [`PickSize`]); none while it is
    /// catching up. That is `size.base` ids, or more (up to [`RESIDENT_PICK_CAP`] ×
    /// `size.keep`) when the similarities near the last of them are within twice the bound
    /// of the `keep`-th: the pick then runs on until one is not, so the best `keep` reach
    /// the floor whatever the rounding (else near-equal similarities would send the
    /// statement to its exact scan).
    pub(super) fn from(resident: &Resident, query: &[f32], size: PickSize) -> Self {
        if resident.caught_up {
            Self::from_set(&resident.set, query, size)
        } else {
            Self::none(resident.set.seq())
        }
    }

    /// No ids, from a set at `seq`: the statement's exact scan answers.
    pub(super) fn none(seq: i64) -> Self {
        DensePick {
            ids: Vec::new(),
            floor: f32::NEG_INFINITY,
            seq,
        }
    }

    fn from_set(set: &VectorSet, query: &[f32], PickSize { keep, base }: PickSize) -> Self {
        let error = set.similarity_error();
        let cap = (RESIDENT_PICK_CAP * keep).max(base);
        // Where the pick ends: past `base`, at the first similarity more than twice the
        // bound under the `keep`-th (None: no such similarity among these).
        let plateau_end = |nearest: &[(&str, f32)]| -> Option<usize> {
            let kth = nearest.get(keep.checked_sub(1)?)?.1;
            nearest
                .iter()
                .enumerate()
                .skip(base.saturating_sub(1))
                .find(|(_, (_, score))| *score <= kth - 2.0 * error)
                .map(|(i, _)| i + 1)
        };
        // Most picks end soon after `base`: ask for twice that first, and for the cap only
        // when a plateau runs past it (the scan costs the same; ranking 240 rows does not).
        let asked = (2 * base).min(cap);
        let mut nearest = set.nearest(query, asked);
        if plateau_end(&nearest).is_none() && asked < cap && nearest.len() == asked {
            nearest = set.nearest(query, cap);
        }
        if let Some(end) = plateau_end(&nearest) {
            nearest.truncate(end);
        }
        // A pick of the whole set has no floor: a new vector anywhere may enter.
        let floor = match nearest.last() {
            Some((_, score)) if nearest.len() < set.len() => *score + error,
            _ => f32::NEG_INFINITY,
        };
        DensePick {
            ids: nearest.iter().map(|(id, _)| (*id).to_owned()).collect(),
            floor,
            seq: set.seq(),
        }
    }

    /// The statement's `DENSE_FLOOR`: what an exact similarity must reach to count (see
    /// [`DensePick::floor`]), below every similarity when the pick holds the whole set, and
    /// NULL without ids (the exact scan answers).
    pub(super) fn floor_param(&self) -> Value {
        if self.ids.is_empty() {
            Value::Null
        } else if self.floor.is_finite() {
            Value::Float(f64::from(self.floor))
        } else {
            Value::Float(BELOW_EVERY_SIMILARITY)
        }
    }
}

/// Lower than any cosine similarity (they lie in [−1, 1]).
const BELOW_EVERY_SIMILARITY: f64 = -2.0;

/// A vector change read with the candidates: the memory's vector now, or `None` when it
/// has none of this model in this project.
pub(super) struct VectorChange {
    pub(super) id: String,
    pub(super) seq: i64,
    pub(super) vector: Option<Vec<f32>>,
}

/// Applies the changes one statement read after the set's position. The log keeps each
/// memory's latest change only, so a statement's changes bring the set to that statement's
/// snapshot; when two searches of one instance overlap, the later snapshot may be applied
/// first, and the earlier one's changes (all at or below the set's position by then) are
/// skipped rather than written back over newer vectors.
fn apply_changes(set: &mut VectorSet, changes: Vec<VectorChange>) {
    let applied = set.seq();
    for change in changes.into_iter().filter(|c| c.seq > applied) {
        // A vector of another length than the model's cannot be compared; the exact
        // re-score in SQL reports such a row, so here it is only left out.
        let kept = match &change.vector {
            Some(v) => set.upsert(&change.id, v).is_ok(),
            None => false,
        };
        if !kept {
            set.remove(&change.id);
        }
        set.advance_to(change.seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 30 unit vectors `step` rad apart, `m00` along the x axis.
    fn spread(step: f32) -> VectorSet {
        let mut set = VectorSet::new(2);
        for i in 0..30 {
            let angle = i as f32 * step;
            set.upsert(&format!("m{i:02}"), &[angle.cos(), angle.sin()])
                .unwrap();
        }
        set
    }

    fn change(id: &str, seq: i64, vector: Option<[f32; 2]>) -> VectorChange {
        VectorChange {
            id: id.to_owned(),
            seq,
            vector: vector.map(|v| v.to_vec()),
        }
    }

    #[test]
    fn an_older_snapshot_applied_late_changes_nothing() {
        let mut set = VectorSet::new(2);
        // The later snapshot (x rewritten at 13) arrives first…
        apply_changes(
            &mut set,
            vec![
                change("y", 12, Some([0.0, 1.0])),
                change("x", 13, Some([1.0, 0.0])),
            ],
        );
        // …then the earlier one, which still saw x's old vector and no y.
        apply_changes(
            &mut set,
            vec![change("x", 11, Some([-1.0, 0.0])), change("z", 12, None)],
        );
        assert_eq!(set.seq(), 13);
        assert_eq!(set.nearest(&[1.0, 0.0], 1)[0], ("x", 1.0));
        assert!(set.contains("y"));
        // A newer change still applies, and a removal removes.
        apply_changes(&mut set, vec![change("y", 14, None)]);
        assert!(!set.contains("y") && set.seq() == 14);
    }

    #[test]
    fn a_set_catching_up_picks_nothing_until_a_batch_comes_short() {
        let mut resident = Resident::new(2);
        let query = [1.0, 0.0];
        assert!(DensePick::from(&resident, &query, PickSize::overfetched(2))
            .ids
            .is_empty());
        let batch: Vec<VectorChange> = (0..CHANGE_BATCH)
            .map(|i| change(&format!("m{i}"), i as i64 + 1, Some([1.0, i as f32])))
            .collect();
        resident.apply(batch);
        let pick = DensePick::from(&resident, &query, PickSize::overfetched(2));
        assert!(pick.ids.is_empty(), "a full batch: more may be waiting");
        assert_eq!(pick.seq, CHANGE_BATCH as i64);
        resident.apply(vec![change(
            "last",
            CHANGE_BATCH as i64 + 1,
            Some([1.0, 0.0]),
        )]);
        let pick = DensePick::from(&resident, &query, PickSize::overfetched(2));
        assert_eq!(pick.ids[..2], ["last", "m0"]);
        assert_eq!(resident.set.len(), CHANGE_BATCH + 1);
        // No changes at all is a short batch too.
        resident.apply(Vec::new());
        assert_eq!(
            DensePick::from(&resident, &query, PickSize::overfetched(2))
                .ids
                .len(),
            4
        );
    }

    #[test]
    fn the_floor_is_the_last_pick_and_the_bound_or_below_every_similarity() {
        let mut set = VectorSet::new(2);
        for (i, v) in [[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]].iter().enumerate() {
            set.upsert(&format!("m{i}"), v).unwrap();
        }
        let query = [1.0, 0.0];
        let full = DensePick::from_set(&set, &query, PickSize::overfetched(1));
        assert_eq!(full.ids, ["m0", "m1"]);
        // m1's stored components are rounded, so its similarity is near 0.6; a vector left
        // out could score up to the bound more than that, exactly.
        let last = set.nearest(&query, 2)[1].1;
        assert!((last - 0.6).abs() <= set.similarity_error() && last != 0.6);
        assert_eq!(
            full.floor_param(),
            Value::Float(f64::from(last + set.similarity_error()))
        );
        // The whole set picked: a new vector anywhere may enter, so no floor holds.
        let whole = DensePick::from_set(&set, &query, PickSize::overfetched(3));
        assert_eq!(whole.floor_param(), Value::Float(BELOW_EVERY_SIMILARITY));
        assert_eq!(DensePick::none(3).floor_param(), Value::Null);
    }

    #[test]
    fn a_plateau_of_near_equal_similarities_extends_the_pick_past_it() {
        let mut set = VectorSet::new(2);
        // Twenty copies of one memory, then ten far ones: the best 4 are copies, and so
        // are the 8 a plain pick would take, all within the bound of each other.
        for i in 0..20 {
            set.upsert(&format!("dup{i:02}"), &[0.9, 0.435_889_9])
                .unwrap();
        }
        for i in 0..10 {
            set.upsert(&format!("far{i}"), &[0.5, 0.866_025_4]).unwrap();
        }
        let query = [1.0, 0.0];
        let pick = DensePick::from_set(&set, &query, PickSize::overfetched(4));
        // The pick runs through the copies to the first far memory, whose similarity
        // (plus the bound) is the floor every copy clears.
        assert_eq!(pick.ids.len(), 21);
        assert!(pick.ids[..20].iter().all(|id| id.starts_with("dup")));
        assert!((pick.floor - (0.5 + set.similarity_error())).abs() <= set.similarity_error());
        assert!(pick.floor < 0.9 - set.similarity_error());
        // Without a plateau the pick stays at the overfetch.
        let spread = spread(0.05);
        assert_eq!(
            DensePick::from_set(&spread, &query, PickSize::overfetched(4))
                .ids
                .len(),
            8
        );
        // A plateau past the cap stops at the cap.
        let mut flat = VectorSet::new(2);
        for i in 0..100 {
            flat.upsert(&format!("c{i:03}"), &[1.0, 0.0]).unwrap();
        }
        let capped = DensePick::from_set(&flat, &query, PickSize::overfetched(4));
        assert_eq!(capped.ids.len(), RESIDENT_PICK_CAP * 4);
        assert!(capped.floor.is_finite());
    }

    #[test]
    fn a_query_filtered_by_project_alone_picks_its_limit_plus_exclusions() {
        let mut query = SearchQuery::new("locks");
        assert_eq!(
            PickSize::for_query(&query, 30),
            PickSize { keep: 30, base: 30 }
        );
        query.exclude_ids = vec!["a".into(), "b".into()];
        query.min_confidence = Some(0.0);
        assert_eq!(
            PickSize::for_query(&query, 30),
            PickSize { keep: 32, base: 32 }
        );
        query.min_confidence = Some(0.5);
        assert_eq!(PickSize::for_query(&query, 30), PickSize::overfetched(30));
        let mut typed = SearchQuery::new("locks");
        typed.types = vec![crate::MemoryType::Gotcha];
        assert_eq!(PickSize::for_query(&typed, 30), PickSize::overfetched(30));

        // Without overfetch, the floor still lies below every kept pick: the pick runs to
        // the first similarity more than twice the bound under the last kept one.
        // Similarities 0.1 rad apart differ by far more than twice the bound past the third.
        let spread = spread(0.1);
        let pick = DensePick::from_set(&spread, &[1.0, 0.0], PickSize { keep: 4, base: 4 });
        assert_eq!(pick.ids, ["m00", "m01", "m02", "m03", "m04"]);
        let fourth = spread.nearest(&[1.0, 0.0], 4)[3].1;
        assert!(pick.floor <= fourth - spread.similarity_error());
    }
}
