//! What a person's memory would look like to an agent before it is stored: the packed text
//! an injection would carry, citation chip and all, so they can reword it first.

use engram_core::time::rfc3339_from_millis;
use engram_retrieval::{pack, Candidate, PackedContext, PackingBudget};
use engram_store::Database;

use super::Taught;
use crate::{Engram, EngramError};

/// The id the preview's chip shows in place of the id a write would assign.
pub const PREVIEW_ID: &str = "new";

impl<D: Database> Engram<D> {
    /// The context an agent would be given for `taught` alone, validated and redacted as
    /// [`Engram::teach`] would store it. Nothing is written; no round trip.
    pub fn preview_teach(&self, taught: Taught) -> Result<PackedContext, EngramError> {
        let mut memory = taught.into_new_memory();
        memory.validate()?;
        self.redact(&mut memory);
        memory.validate()?;
        let now = rfc3339_from_millis(self.host.clock.now_millis());
        let stored = memory.into_stored(PREVIEW_ID, self.project_id(), &now);
        Ok(pack(
            &[Candidate::new(stored)],
            &PackingBudget::for_phase(None),
        ))
    }
}
