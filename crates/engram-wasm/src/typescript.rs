//! TypeScript declarations for the plain objects the API takes and returns.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
export type MemoryType =
  | "gotcha" | "decision" | "preference" | "pattern" | "requirement" | "error_pattern"
  | "module_insight" | "prefetch_pattern" | "work_state" | "causal_dependency"
  | "task_calibration" | "e2e_observation" | "dead_end" | "work_unit_outcome"
  | "workflow_recipe" | "context_cost";
export type MemorySource =
  | "agent_explicit" | "observer_inferred" | "qa_auto" | "mcp_auto" | "commit_auto" | "user_taught";
export type MemoryScope = "global" | "module" | "work_unit" | "session";
export type Visibility = "personal" | "project" | "team" | "organization";
export type Phase = "define" | "implement" | "validate" | "refine" | "explore" | "reflect";
export type RelationType = "required_with" | "conflicts_with" | "validates" | "supersedes" | "derived_from";

export interface MemoryRelation {
  targetMemoryId?: string;
  targetFilePath?: string;
  relationType: RelationType;
  confidence?: number;
  autoExtracted?: boolean;
}
export interface WorkUnitRef { methodology: string; hierarchy?: string[]; label: string; }
export interface TrustFlags {
  needsReview?: boolean; userVerified?: boolean; pinned?: boolean;
  contaminated?: boolean; secretScanSkipped?: boolean;
}
export interface ChunkMeta { chunkType: string; startLine: number; endLine: number; contextPrefix?: string; }

/** A memory to store. Only `type` and `content` are required. */
export interface NewMemory {
  type: MemoryType;
  content: string;
  confidence?: number;
  tags?: string[];
  relatedFiles?: string[];
  relatedModules?: string[];
  scope?: MemoryScope;
  visibility?: Visibility;
  phase?: Phase;
  source?: MemorySource;
  sessionId?: string;
  commitSha?: string;
  provenanceSessionIds?: string[];
  workUnitRef?: WorkUnitRef;
  methodology?: string;
  relations?: MemoryRelation[];
  decayHalfLifeDays?: number;
  flags?: TrustFlags;
  citationText?: string;
  chunk?: ChunkMeta;
  /** The code-graph node the memory is about (`src/auth.ts#function:verifyJwt`). */
  targetNodeId?: string;
}

/** A stored memory. */
export interface Memory extends Required<Omit<NewMemory, "phase" | "sessionId" | "commitSha" | "workUnitRef" | "methodology" | "decayHalfLifeDays" | "citationText" | "chunk" | "targetNodeId">> {
  id: string;
  projectId: string;
  createdAt: string;
  lastAccessedAt: string;
  accessCount: number;
  deprecated: boolean;
  phase?: Phase;
  sessionId?: string;
  commitSha?: string;
  workUnitRef?: WorkUnitRef;
  methodology?: string;
  decayHalfLifeDays?: number;
  citationText?: string;
  chunk?: ChunkMeta;
  embeddingModelId?: string;
  targetNodeId?: string;
}

export interface Remembered {
  id: string; redacted: string[]; secretScanSkipped: boolean;
  /** The model that embedded it; absent without an embedder or when embedding failed. */
  embeddingModel?: string; embeddingError?: string;
}
export type SearchMode = "hybrid" | "keyword" | "dense";
export interface SearchQuery { text: string; limit?: number; types?: MemoryType[]; mode?: SearchMode; }
/** `score` is the reciprocal-rank-fusion score; the other fields explain it per path. */
export interface SearchHit {
  memory: Memory; score: number;
  bm25Rank?: number; bm25?: number; denseRank?: number; distance?: number;
}
export interface SearchResponse { hits: SearchHit[]; tokens: string[]; warnings?: string[]; }

/** A piece of a source file, cut at definition boundaries by `chunkFile`. */
export interface Chunk {
  path: string;
  language: "typescript" | "tsx" | "javascript" | "python" | "rust" | "go" | null;
  kind: string;
  name: string | null;
  startLine: number;
  endLine: number;
  startByte: number;
  endByte: number;
  content: string;
  contextPrefix: string;
}

/** A remote embedding provider, called through `fetch`; every answer must have `dims` floats. */
export interface RemoteEmbedderOptions {
  provider: "openai" | "ollama";
  /** Base URL (`https://api.openai.com/v1`, `http://127.0.0.1:11434`) or the full endpoint. */
  url: string;
  model: string;
  dims: number;
  apiKey?: string;
  /** Send `dimensions` (OpenAI text-embedding-3-*); off by default. */
  requestDims?: boolean;
}

export type CreateMemoryOptions =
  | { url: string; authToken?: string; projectId?: string; fetch?: typeof fetch; embedder?: RemoteEmbedderOptions }
  | { local: true; projectId?: string; fetch?: typeof fetch; embedder?: RemoteEmbedderOptions };

/** Errors thrown by engram carry a stable code and the offending fields. */
export interface EngramError extends Error {
  code: "invalid_input" | "unauthorized" | "unavailable" | "sql_error" | "storage_error" | "embedder_unavailable";
  violations: { field: string; problem: string }[];
}
"#;
