//! The entry every change to a memory appends to its history.

use serde::{Deserialize, Serialize};

/// What happened to a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryAction {
    /// It was stored.
    Created,
    /// A memory saying the same thing was merged into it (the new wording is kept here).
    Merged,
    /// It replaced another memory (`related_id`).
    Supersedes,
    /// Another memory (`related_id`) replaced it; it is retired.
    Superseded,
    /// Its fields were edited.
    Edited,
    /// A person confirmed it.
    Confirmed,
    /// A person said it is wrong; it is retired.
    Flagged,
    /// It was pinned or unpinned.
    Pinned,
    /// Uses nobody corrected raised its confidence or cleared its review.
    Reinforced,
    /// Pruning retired it (soft delete): its confidence decayed below the floor, or the
    /// project was over its cap.
    Retired,
    /// Pruning deleted it after the grace period; this entry is what remains.
    Deleted,
    /// It was forgotten on request (soft delete).
    Forgotten,
    /// A retired memory was made live again.
    Restored,
    /// The code it cites changed; it is not injected until reviewed.
    Stale,
    /// A file it cites was renamed and its paths follow.
    Renamed,
    /// It contradicts a memory that is trusted more (`related_id`); both are kept and it
    /// waits for review.
    Conflicts,
}

impl HistoryAction {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            HistoryAction::Created => "created",
            HistoryAction::Merged => "merged",
            HistoryAction::Supersedes => "supersedes",
            HistoryAction::Superseded => "superseded",
            HistoryAction::Edited => "edited",
            HistoryAction::Confirmed => "confirmed",
            HistoryAction::Flagged => "flagged",
            HistoryAction::Pinned => "pinned",
            HistoryAction::Reinforced => "reinforced",
            HistoryAction::Retired => "retired",
            HistoryAction::Deleted => "deleted",
            HistoryAction::Forgotten => "forgotten",
            HistoryAction::Restored => "restored",
            HistoryAction::Stale => "stale",
            HistoryAction::Renamed => "renamed",
            HistoryAction::Conflicts => "conflicts",
        }
    }

    /// Parses a stored name.
    pub fn parse(text: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(text.to_owned())).ok()
    }
}

/// One change to one memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// The memory it happened to.
    pub memory_id: String,
    /// What happened.
    pub action: HistoryAction,
    /// The changed fields before (a JSON object), when fields changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<serde_json::Value>,
    /// The changed fields after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<serde_json::Value>,
    /// Why, in a sentence.
    pub reason: String,
    /// Who or what did it: a memory source (`agent_explicit`, `observer_inferred`,
    /// `user_taught`…), `prune`, `user` or `staleness`.
    pub actor: String,
    /// The other memory involved (merged from, superseded by, supersedes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_id: Option<String>,
    /// When (RFC 3339).
    pub at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_round_trip_through_their_stored_names() {
        for action in [
            HistoryAction::Created,
            HistoryAction::Superseded,
            HistoryAction::Retired,
            HistoryAction::Renamed,
        ] {
            assert_eq!(HistoryAction::parse(action.as_str()), Some(action));
        }
        assert_eq!(HistoryAction::parse("exploded"), None);
    }
}
