// The names engram's API uses, for the panel's selects.
import type { MemorySource, MemoryType } from "engram";

export const MEMORY_TYPES: MemoryType[] = [
  "gotcha", "decision", "preference", "pattern", "requirement", "error_pattern", "module_insight",
  "prefetch_pattern", "work_state", "causal_dependency", "task_calibration", "e2e_observation",
  "dead_end", "work_unit_outcome", "workflow_recipe", "context_cost",
];

export const MEMORY_SOURCES: MemorySource[] = [
  "agent_explicit", "observer_inferred", "qa_auto", "mcp_auto", "commit_auto", "user_taught",
];
