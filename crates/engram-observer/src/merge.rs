//! Parallel agents: their scratchpads merged into one, with a quorum boost for what several
//! of them observed and a conflict signal for files more than one of them edited.

use std::collections::HashMap;

use crate::scratchpad::{FileId, Scratchpad};

impl Scratchpad {
    /// Merges the scratchpads of agents that worked in parallel on one task into one
    /// scratchpad for `session_id`. Counts add up; each observation key remembers how many
    /// agents showed it ([`Scratchpad::quorum`]), which lets it pass the frequency filter on
    /// one session and raises its confidence; files edited by two or more agents become
    /// parallel-conflict evidence.
    pub fn merge(session_id: impl Into<String>, pads: &[Scratchpad]) -> Scratchpad {
        let first = pads.first();
        let mut merged = Scratchpad::new(
            session_id,
            first.map(|p| p.kind).unwrap_or_default(),
            first.map(|p| p.normalizer.clone()).unwrap_or_default(),
        );
        let mut editors: HashMap<String, Vec<u32>> = HashMap::new();
        for (agent, pad) in pads.iter().enumerate() {
            let mut map: Vec<FileId> = Vec::with_capacity(pad.files.len());
            for file in &pad.files {
                let id = match merged.file_ids.get(&file.path) {
                    Some(&id) => id,
                    None => {
                        let id = merged.files.len() as FileId;
                        merged.files.push(crate::scratchpad::FileStats {
                            path: file.path.clone(),
                            created: file.created,
                            first_step: file.first_step,
                            ..Default::default()
                        });
                        merged.file_ids.insert(file.path.clone(), id);
                        id
                    }
                };
                let target = &mut merged.files[id as usize];
                target.reads += file.reads;
                target.edits += file.edits;
                target.created &= file.created;
                target.deleted = target.deleted || file.deleted;
                target.first_step = target.first_step.min(file.first_step);
                target.last_step = target.last_step.max(file.last_step);
                target.last_edit_step = target.last_edit_step.max(file.last_edit_step);
                target.backtrack_steps.extend(&file.backtrack_steps);
                target.failed_reads += file.failed_reads;
                target.reverted |= file.reverted;
                target.edit_log.extend(file.edit_log.iter().cloned());
                target.edit_log.sort_by_key(|e| e.step);
                target.edit_log.truncate(24);
                target.first_edit_step = match (target.first_edit_step, file.first_edit_step) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                if file.edits > 0 {
                    editors
                        .entry(file.path.clone())
                        .or_default()
                        .push(agent as u32);
                }
                map.push(id);
            }
            for (&key, pair) in &pad.pairs {
                let (a, b) = (map[(key >> 32) as usize], map[(key & 0xffff_ffff) as usize]);
                let (low, high) = (a.min(b), a.max(b));
                let target = merged
                    .pairs
                    .entry(u64::from(low) << 32 | u64::from(high))
                    .or_default();
                target.count += pair.count;
                target.low_first += if a == low {
                    pair.low_first
                } else {
                    pair.count - pair.low_first
                };
                target.steps.extend(&pair.steps);
            }
            for (key, error) in &pad.errors {
                let target = merged.errors.entry(key.clone()).or_insert_with(|| {
                    crate::scratchpad::ErrorStats {
                        subject: error.subject.clone(),
                        signature: error.signature.clone(),
                        line: error.line.clone(),
                        command: error.command.clone(),
                        ..Default::default()
                    }
                });
                target.count += error.count;
                target.steps.extend(&error.steps);
                target.resolved_step = target.resolved_step.max(error.resolved_step);
                target
                    .fixed_by
                    .extend(error.fixed_by.iter().map(|&f| map[f as usize]));
            }
            for (pattern, search) in &pad.searches {
                let target = merged.searches.entry(pattern.clone()).or_default();
                target.count += search.count;
                target.misses += search.misses;
                target.steps.extend(&search.steps);
            }
            for (pattern, count) in &pad.empty_globs {
                *merged.empty_globs.entry(pattern.clone()).or_default() += count;
            }
            for (sequence, count) in &pad.sequences {
                *merged.sequences.entry(sequence.clone()).or_default() += count;
            }
            for lesson in &pad.lessons {
                let mut lesson = lesson.clone();
                lesson.file = lesson.file.map(|f| map[f as usize]);
                merged.lessons.push(lesson);
            }
            if merged.task.is_none() {
                merged.task.clone_from(&pad.task);
            }
            for run in &pad.test_runs {
                match merged
                    .test_runs
                    .iter_mut()
                    .find(|r| r.command == run.command)
                {
                    Some(existing) if existing.step <= run.step => *existing = run.clone(),
                    Some(_) => {}
                    None => merged.test_runs.push(run.clone()),
                }
            }
            for command in &pad.test_commands {
                if !merged.test_commands.contains(command) {
                    merged.test_commands.push(command.clone());
                }
            }
            merged
                .import_chases
                .extend(pad.import_chases.iter().map(|&(s, f)| (s, map[f as usize])));
            merged.token_spikes.extend(&pad.token_spikes);
            for trigger in &pad.triggers {
                match merged
                    .triggers
                    .iter_mut()
                    .find(|t| t.signal == trigger.signal)
                {
                    Some(existing) => existing.step = existing.step.min(trigger.step),
                    None => merged.triggers.push(*trigger),
                }
            }
            merged.external_step = match (merged.external_step, pad.external_step) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            merged.step = merged.step.max(pad.step);
            merged.events += pad.events;
            let mut keys: Vec<String> = pad.observations().into_iter().map(|o| o.key).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                // A scratchpad that is itself a merge brings its own agents' count.
                let agents = pad.quorum.get(&key).copied().unwrap_or(1);
                *merged.quorum.entry(key).or_default() += agents;
            }
        }
        for file in &mut merged.files {
            file.backtrack_steps.sort_unstable();
            file.backtrack_steps.truncate(8);
        }
        let mut conflicts: Vec<(String, Vec<u32>)> = editors
            .into_iter()
            .filter(|(_, agents)| agents.len() >= 2)
            .collect();
        conflicts.sort();
        merged.conflicts = conflicts;
        merged
    }
}
