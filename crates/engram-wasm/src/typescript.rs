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
  /** The caller's key for this write: a second write with the same key stores nothing
   * and answers with the first one's id (`replayed`). Not part of the memory. */
  idempotencyKey?: string;
}

/** A stored memory. */
export interface Memory extends Required<Omit<NewMemory, "phase" | "sessionId" | "commitSha" | "workUnitRef" | "methodology" | "decayHalfLifeDays" | "citationText" | "chunk" | "targetNodeId" | "idempotencyKey">> {
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
  /** Times it was said (merges add one). */
  occurrences: number;
  /** The memory that replaced it (it is then retired and kept with its history). */
  supersededBy?: string;
  /** Why it is stale (its cited code changed); it is not injected until reviewed. */
  staleReason?: string;
}

/** What happened to a memory. */
export type HistoryAction = "created" | "merged" | "supersedes" | "superseded" | "edited" |
  "confirmed" | "flagged" | "pinned" | "reinforced" | "retired" | "deleted" | "forgotten" |
  "restored" | "stale" | "renamed" | "conflicts";
/** One change to one memory. */
export interface HistoryEntry {
  memoryId: string; action: HistoryAction; before?: unknown; after?: unknown; reason: string;
  actor: string; relatedId?: string; at: string;
}
/** How `prune` decides (every field optional; `cap: null` for no cap). */
export interface PruneRequest { dryRun?: boolean; floor?: number; idleHalfLives?: number; graceDays?: number; cap?: number | null; }
/** A memory pruning retires or deletes, and why. */
export interface PruneDecision { id: string; reason: string; }
/** What `prune` did (or would do, with `dryRun`). */
export interface PruneReport {
  dryRun: boolean; liveBefore: number; liveAfter: number;
  retired: PruneDecision[]; evicted: PruneDecision[]; deleted: PruneDecision[];
}
/** What `flushUses` wrote. */
export interface UsesFlushed { memories: number; stale: number; }

/** Which memories `list` and `count` take (every field narrows; live ones by default). */
export interface MemoryFilter {
  types?: MemoryType[]; sources?: MemorySource[]; scopes?: MemoryScope[]; visibilities?: Visibility[];
  files?: string[]; modules?: string[]; tags?: string[];
  needsReview?: boolean; stale?: boolean; superseded?: boolean; pinned?: boolean;
  userVerified?: boolean; contaminated?: boolean; status?: "live" | "retired" | "all";
  /** RFC 3339 bounds. */
  createdAfter?: string; createdBefore?: string; updatedAfter?: string; updatedBefore?: string;
  usedAfter?: string; usedBefore?: string;
  /** Words the content holds. */
  text?: string;
}
/** One page of a listing; pass `nextCursor` back as `cursor` for the next. */
export interface ListRequest {
  filter?: MemoryFilter; sort?: "created" | "updated" | "used" | "confidence"; ascending?: boolean;
  /** 1 to 500 (default 50). */
  limit?: number; cursor?: string;
}
export interface ListPage { memories: Memory[]; nextCursor?: string; }
/** The fields a person changes; absent ones stay. */
export interface MemoryUpdate {
  content?: string; type?: MemoryType; tags?: string[]; relatedFiles?: string[]; relatedModules?: string[];
  scope?: MemoryScope; visibility?: Visibility; confidence?: number; citationText?: string;
}
/** A person's own memory (`teach`): confirmed, trusted above an agent's. */
export interface Taught { content: string; type?: MemoryType; relatedFiles?: string[]; tags?: string[]; }
/** Instruction files to import, by their path from the project root. */
export interface ImportRequest { files: { path: string; text: string }[]; }
export type RuleOutcome = "added" | "merged" | "unchanged" | "reformatted" | "revised" | "forgotten";
export interface ImportedRule {
  id: string; line: number; endLine: number; type: MemoryType; outcome: RuleOutcome; text: string; files: string[];
}
export interface FileImport {
  path: string; format: string; unchangedFile: boolean; rules: ImportedRule[];
  retired: { id: string; line: number; text: string }[];
  imports: { target: string; resolved?: string; line: number }[]; unresolved: string[];
}
export interface ImportReport { files: FileImport[]; pending?: boolean; }
/** A project's memories whole: rows keyed by column, for `loadExport`. */
export interface ProjectExport {
  format: "engram-export"; version: number; schemaVersion: number; projectId: string;
  memories: Record<string, unknown>[]; history: Record<string, unknown>[]; origins: Record<string, unknown>[];
  redacted: number;
  /** The project's trust level, when a person set one. */
  trustLevel?: 1 | 2 | 3 | 4;
}
export interface ExportLoaded { memories: number; history: number; origins: number; }
/** One part of the health score: a share in [0, 1] and its weight. */
export interface HealthPart { name: string; share: number; weight: number; detail: string; }
export interface HealthReport {
  /** 0 to 100. */
  score: number; parts: HealthPart[]; live: number;
  byType: Record<string, number>; bySource: Record<string, number>;
  /** Per week: memories stored and retired, and those stored by type and by source. */
  growth: { week: string; added: number; retired: number; byType: Record<string, number>; bySource: Record<string, number> }[];
  folders: { folder: string; memories: number }[];
}
/** A project's trust level: 1 cautious (injects memories of confidence 0.80 and up, every
 * new memory waits for review), 2 standard (0.65, the default), 3 confident (0.55, the
 * review shows what waits only), 4 autonomous (0.45, new memories count as confirmed). */
export interface TrustSetting {
  level: 1 | 2 | 3 | 4; name: "cautious" | "standard" | "confident" | "autonomous";
  injectionThreshold: number; reviewDetail: "full" | "needs_review_only" | "suppressed";
  /** Whether a person set it (else it is the default). */
  set: boolean;
}
/** One session, reviewed: what it was shown, what it learned by part (as the trust level
 * sorts it), and the reading memory saved it. */
export interface SessionReview {
  sessionId: string; applied: Memory[]; needsReview: Memory[]; autoConfirmed: Memory[]; learned: Memory[];
  estimatedTokensSaved: number; trust: TrustSetting;
  /** How many of what it learned a person flagged wrong; at 3 or more a more cautious
   * level is suggested. */
  flaggedWrong: number; suggestedLevel?: 1 | 2 | 3 | 4;
}
/** Where `loadEmbeddingModel` finds the pinned model: `url` is a folder the host serves holding
 * `model.onnx` and `tokenizer.json` (`npx engram-model fetch --dir public/models` puts them
 * there); each file is checked against its pinned sha256 and cached (Node: `cacheDir`, by
 * default $ENGRAM_MODEL_DIR or ~/.cache/engram/models; browsers and workers: the Cache API;
 * `cache: false` for none). Without `url`, Node reads the cache alone. */
export interface ModelSource { url?: string; cacheDir?: string; cache?: false; fetch?: typeof fetch; footprint?: Footprint; }
/** How the transformer spends memory: "fast" (the default: f32 weights, a plan per length
 * bucket; about 275 MiB in wasm) or "compact" (int8 weights dequantized one matrix at a
 * time, one plan; about 90 MiB in wasm, for a Worker's 128 MB; the same vectors, slower). */
export type Footprint = "fast" | "compact";
/** Fetches (or reads from the cache) the pinned model, each file checked against its sha256,
 * and loads it; rejects with a `model_error` naming what was wrong. */
export function loadEmbeddingModel(source?: ModelSource): Promise<EmbeddingModel>;
/** Loads the transformer from bytes already held: its ONNX file and `tokenizer.json`. */
export function loadEmbeddingModel(onnx: Uint8Array, tokenizerJson: Uint8Array, modelId?: string, footprint?: Footprint): Promise<EmbeddingModel>;
/** Loads the static edge model (its table and `tokenizer.json`). */
export function loadStaticEmbeddingModel(table: Uint8Array, tokenizerJson: Uint8Array, modelId?: string): Promise<EmbeddingModel>;
/** What `createMemoryWithModel` embeds with: the package's `EmbeddingModel`, or any object
 * with these members (`embedMany` returns the vectors end to end, `texts.length × dims`). */
export interface Embedder {
  readonly modelId: string;
  readonly dims: number;
  embedMany(texts: string[]): Float32Array;
}
/** A loaded sentence-embedding model (the package's embedder module, loaded on first use):
 * share one between engram handles; `free()` releases it. */
export interface EmbeddingModel extends Embedder {
  /** Embeds one text into a unit-length vector. */
  embed(text: string): Float32Array;
  free(): void;
}
/** The model the package pins: its id and each file's name, sha256 and size. */
export const PINNED_MODEL: {
  readonly id: "all-minilm-l6-v2-int8";
  readonly files: {
    readonly onnx: { readonly name: "model.onnx"; readonly sha256: string; readonly bytes: number };
    readonly tokenizer: { readonly name: "tokenizer.json"; readonly sha256: string; readonly bytes: number };
  };
};
/** Where an instruction file states a memory: its path, the rule's lines, its heading. */
export interface RuleOrigin { file: string; line: number; endLine: number; section: string; }
/** One session engram has seen, for choosing one to review. */
export interface SessionSummary {
  sessionId: string;
  /** When it last finalized, was shown or learned a memory (RFC 3339). */
  lastSeenAt: string;
  /** How it ended, when the observer finalized it. */
  outcome?: "success" | "failure" | "cancelled";
  steps: number; shown: number; learned: number; needsReview: number;
}
/** Which part of the module map to draw: at most `limit` files (1 to 400, default 80), only
 * those under `folder`. */
export interface MapRequest { limit?: number; folder?: string; }
/** A file of the module map: its live memories, and how often agents opened it. */
export interface MapFile { path: string; folder: string; memories: number; accesses: number; sessions: number; }
/** Two files agents read or edit together; `weight` in [0, 1]. */
export interface CoAccessEdge { a: string; b: string; weight: number; sessions: number; }
/** A file whose code uses another's. */
export interface DependencyEdge { from: string; to: string; }
export interface ModuleMap { files: MapFile[]; coAccess: CoAccessEdge[]; dependencies: DependencyEdge[]; }

export interface Remembered {
  id: string; redacted: string[]; secretScanSkipped: boolean;
  /** The model that embedded it; absent without an embedder or when embedding failed. */
  embeddingModel?: string; embeddingError?: string;
  /** Not stored yet: the database is out of reach and the write waits in the buffer
   * (`writeStatus()`); it keeps this id when flushed. */
  pending?: boolean;
  /** Stored before by a write with the same `idempotencyKey`; `id` is that write's. */
  replayed?: boolean;
  /** It said what a live memory says: `id` is that memory's, one occurrence more. */
  merged?: boolean;
  /** The memory it replaced (now retired, `supersededBy` this one). */
  superseded?: string;
  /** A memory trusted more that it contradicts: both are kept, this one needs review. */
  conflictsWith?: string;
}
/** Writes' state: degraded while the database is out of reach or writes wait. */
export interface WriteStatus { degraded: boolean; pending: number; capacity: number; dropped: number; lastError?: string; }
export type SearchMode = "hybrid" | "keyword" | "dense";
/** `search` answers an agent's explicit request; `auto_inject` runs between steps: at most
 * 3 results, only strong ones, possibly none, never memories that need review. */
export type SearchIntent = "search" | "auto_inject";
export type QueryType = "identifier" | "semantic" | "structural";
/** What the agent runtime knows about the moment of the query. */
export interface QueryContext { recentTurns?: string[]; recentTools?: string[]; recentFiles?: string[]; }
export interface SearchQuery {
  text: string; limit?: number; types?: MemoryType[]; mode?: SearchMode; intent?: SearchIntent;
  phase?: Phase; context?: QueryContext; files?: string[]; modules?: string[];
  minConfidence?: number; scopes?: MemoryScope[]; excludeIds?: string[];
  /** Pack the results into this many tokens (default: the phase's budget, if a phase is given). */
  budget?: number;
  /** Also show, under each hit, the retired memories it superseded (one more read). */
  includeSuperseded?: boolean;
}
/** One path's part in a fused score: rank, its own metric (BM25, cosine similarity or graph
 * score), the path weight for the query type, and `weight / (60 + rank)`. */
export interface PathScore { rank: number; metric: number; weight: number; scale: number; contribution: number; }
export interface Breakdown {
  keyword?: PathScore; dense?: PathScore; graph?: PathScore;
  fused: number; graphBoost: number; boostedBy?: string[];
  phaseWeight: number; trustWeight: number; roleWeight: number; confidence: number; decay: number;
  /** Share of the query's keyword terms the memory contains, in [0, 1]. */
  coverage: number;
  /** Calibrated relevance in [0, 1] from dense similarity and coverage: the same scale for
   *  every query; a search drops hits below 0.1. */
  relevance: number;
  /** The host reranker's score and its own rank among the best 20 it scored; the order
   * fuses that rank with the pipeline's (1/(60 + rank) each). */
  rerank?: number; rerankRank?: number;
  /** (fused + graphBoost) × phaseWeight × trustWeight × roleWeight × confidence × decay. */
  score: number;
}
export interface SearchHit {
  memory: Memory; score: number; breakdown: Breakdown;
  /** The retired memories this one superseded, newest first (with `includeSuperseded`). */
  superseded?: Memory[];
}
export interface PackedItem { id: string; type: MemoryType; file?: string; tokens: number; }
/** Results packed into a token budget, clustered by file, with citation chips. */
export interface PackedContext { text: string; items: PackedItem[]; tokens: number; budget: number; omitted: string[]; }
/** Microseconds per stage. */
export interface StageTimings {
  analysis: number; embed: number; candidates: number; ranking: number; rerank: number;
  hyde: number; packing: number; total: number;
}
export interface SearchResponse {
  hits: SearchHit[]; queryType: QueryType; tokens: string[]; emphasized?: string[];
  identifiers?: string[];
  enrichedWith?: string[]; candidates: number; packed?: PackedContext; emptyReason?: string;
  hyde?: boolean; timings: StageTimings; warnings?: string[];
}

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

/** A source file handed to `indexFiles` / `codeGraph`: a path relative to the repository root, with `/`. */
export interface SourceFile { path: string; content: string; }

/** How to read one `indexFiles` call. */
export interface IndexOptions {
  /** The files are the whole repository: indexed files missing from them were deleted. */
  complete?: boolean;
  /** Paths deleted since the last call (for partial calls). */
  removed?: string[];
}

/** What one `indexFiles` call did. */
export interface IndexReport {
  files: number; unchanged: number; added: number; changed: number; deleted: number;
  renamed: { from: string; to: string }[];
  unsupported: number; tooLarge: string[]; linesParsed: number;
  nodes: number; edges: number; nodesWritten: number; nodesRemoved: number;
  edgesAdded: number; edgesRemoved: number; closureAncestors: number; closureRowsWritten: number;
  changedSymbols: string[];
  /** Memories flagged for review, with why. */
  flagged: { id: string; reason: string }[];
}

/** A graph node reached from a query's target. */
export interface LinkedNode {
  id: string; kind: string; label: string; path: string; startLine: number; endLine: number;
  depth: number; totalWeight: number; pathIds: string[]; edgeKinds: string[]; stale: boolean;
}

/** A file reached from a query's target. */
export interface RelatedFile { path: string; depth: number; weight: number; nodes: number; }

/** A memory attached (by `targetNodeId` or `relatedFiles`) to an impacted node or file. */
export interface AttachedMemory {
  id: string; type: MemoryType; content: string; confidence: number; needsReview: boolean;
  attachedTo: string; depth: number;
}

/** What a change to a target impacts. */
export interface ImpactReport {
  target: string; targets: LinkedNode[]; impacted: LinkedNode[]; files: RelatedFile[];
  memories: AttachedMemory[];
}

/** A file one dependency edge away. */
export interface Neighbour { path: string; direction: "depends_on" | "dependent" | "both"; weight: number; }

/** The layer-1 code graph of a set of files. */
export interface CodeGraph {
  nodes: { id: string; kind: string; label: string; path: string; language: string; startLine: number; endLine: number; hash: string }[];
  edges: { from: string; to: string; kind: string; weight: number }[];
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

/** A rerank service: `cohere` is the `/rerank` shape Cohere, Jina, Voyage, vLLM, Infinity
 * and llama.cpp share; `tei` is Hugging Face text-embeddings-inference. */
export interface RemoteRerankerOptions {
  provider: "cohere" | "jina" | "voyage" | "vllm" | "infinity" | "tei";
  /** Base URL (`https://api.cohere.com/v2`, `http://127.0.0.1:8080`) or the full `/rerank` URL. */
  url: string;
  /** The service's model name; required except for `tei`. */
  model?: string;
  apiKey?: string;
}
/** Scores for `documents` against `query`, one per document in order (higher is better). Each document is a memory as it was embedded: the line naming its files (or a code chunk's file, kind and name), a blank line, then its content. */
export type RerankFunction = (query: string, documents: string[]) => number[] | Promise<number[]>;

/**
 * `residentVectors`: keep the project's vectors in memory (2 × dims bytes each, loaded by
 * the first searches) so dense searches rank them in process; for long-lived processes, not
 * for a Worker serving one request. Needs an embedder.
 * `residentKeywords`: keep the keyword table's postings in memory (loaded by the first
 * searches) so keyword searches rank in process, with the same results; for long-lived
 * processes.
 * `vectorIndex`: dense searches use libSQL's vector index (DiskANN) on the server, created
 * (and filled) if absent when the memory is opened, and searched once the project has 3,000
 * memories (below that the exact scan is faster); for instances that cannot keep vectors
 * in memory, such as a Worker. Needs an embedder; no effect with `local` (exact scan).
 * `reranker`: scores each search's best 20 candidates (a function of the host, or a rerank
 * service), whose ranks are fused with engram's; if it fails the order stays and the
 * response's `warnings` say why.
 */
/** The open options every engram host takes (the component's and the Worker's as JSON),
 * validated by the core: a bad one is an `invalid_input` naming its field, and unknown
 * fields are rejected. */
export interface EngineOptions {
  projectId?: string;
  /** Absent: the model passed to `createMemoryWithModel`, if any. `none`: keyword only. */
  embedder?: RemoteEmbedderOptions | { provider: "none" | "bundled" | "static" };
  residentVectors?: boolean;
  residentKeywords?: boolean;
  vectorIndex?: boolean;
  /** Live memories from which searches consult the vector index (default 3000). */
  vectorIndexMinMemories?: number;
  /** Waits between a failed write's retries in ms (default [1000, 2000, 4000, 8000]). */
  retryDelaysMs?: number[];
  /** Writes held while the database is out of reach (default 50; 0: none). */
  writeBuffer?: number;
  reranker?: RerankFunction | RemoteRerankerOptions;
  /** The `fetch` requests go through (default: the global one); not part of the JSON. */
  fetch?: typeof fetch;
}
export type CreateMemoryOptions =
  | ({ url: string; authToken?: string;
      /** Largest request body (default 1 MiB); larger transactions go in pieces, still one transaction. */
      maxRequestBytes?: number } & EngineOptions)
  | ({ local: true;
      /** Where the embedded database persists: a file path in Node and Electron's main
       * process (created with its folder if absent), a name in the origin's OPFS inside a
       * browser's dedicated Worker. Absent: in memory, gone when the process ends. */
      path?: string } & EngineOptions);

/** Errors thrown by engram carry a stable code and the offending fields. */
export type SessionKind = "build" | "insights" | "roadmap" | "terminal" | "changelog" | "spec_creation" | "pr_review";
export type SessionOutcome = "success" | "failure" | "cancelled";
export interface StartSessionOptions { sessionId: string; kind?: SessionKind; roots?: string[]; }
export type ObserverEvent =
  | { type: "tool_call"; step: number; id?: string; tool: string; input?: unknown; atMs?: number }
  | { type: "tool_result"; step: number; id?: string; output?: string; isError?: boolean }
  | { type: "reasoning"; step: number; text: string }
  | { type: "step_complete"; step: number; inputTokens?: number }
  | { type: "task"; text: string }
  | { type: "session_complete"; outcome: SessionOutcome };
export interface Trigger { signal: string; step: number; priority: number; }
export interface HotFile { path: string; score: number; reads: number; edits: number; }
export interface PromotedMemory {
  id: string; signal: string | null; type: MemoryType; confidence: number; content: string;
  evidenceSteps: number[]; evidence: number; files: string[]; contaminated: boolean;
}
export interface DiscardedObservation { class: string; key: string; reason: string; }
export interface SessionReport {
  sessionId: string; outcome: SessionOutcome; events: number; hotFiles: HotFile[];
  promoted: PromotedMemory[]; discarded: DiscardedObservation[];
  alreadyFinalized: boolean; synthesizedByLlm: boolean; triggers: Trigger[];
  /** The session's record (its task, what it changed, how it was validated, its outcome). */
  record?: PromotedMemory;
}
export interface ParsedTranscript {
  id: string; format: "claude-code" | "mini-swe-agent"; roots: string[];
  events: ObserverEvent[]; outcome: SessionOutcome | null; skipped: string[];
}
export type ToolFormat = "anthropic" | "openai" | "mcp";
/** One tool in the chosen format: `{name, description, input_schema}` (anthropic),
 * `{type: "function", function: {name, description, parameters}}` (openai) or
 * `{name, description, inputSchema}` (mcp). */
export type ToolDefinition = Record<string, unknown>;
export interface ToolOutput { tool: "search_memory" | "record_memory" | "analyze_impact"; text: string; memoryIds: string[]; data: unknown; }
/** A prompt as MCP's `prompts/list` lists it. */
export interface PromptDefinition { name: string; title: string; description: string; arguments: { name: string; description: string; required: boolean }[]; }
export interface PromptOutput { prompt: "session_context"; description: string; text: string; memoryIds: string[]; data: unknown; }
export interface SessionStart { task?: string; files?: string[]; modules?: string[]; phase?: Phase; budget?: number; }
export interface SessionContext { text: string; memoryIds: string[]; tokens: number; budget: number; omitted: string[]; warnings: string[]; }
export type InjectionKind = "file_context" | "file_gotchas" | "reflection" | "known_answer";
export interface Injection { kind: InjectionKind; text: string; memoryIds: string[]; }
export interface ToolResultContext { tool: string; input?: unknown; shownIds?: string[]; }
export interface RecordedEntry { id?: string; type: MemoryType; content: string; }
export interface StepRequest {
  step: number;
  recentToolCalls?: { step: number; id?: string; tool: string; input?: unknown; atMs?: number }[];
  recorded?: RecordedEntry[]; shownIds?: string[]; phase?: Phase;
}
export interface CalibrationSample { module: string; plannedSteps: number; actualSteps: number; methodology?: string; sessionId?: string; }
export interface Calibration {
  module: string; methodology: string; samples: number; meanPlannedSteps: number;
  meanActualSteps: number; ratio: number; memoryId?: string;
}
export interface StepLimitRequest { baseMaxSteps: number; modules?: string[]; methodology?: string; maxSteps?: number; }
export interface StepLimit { maxSteps: number; baseMaxSteps: number; factor: number; calibration?: Calibration; reason: string; }
export interface PlannerRequest { task: string; modules?: string[]; methodology?: string; budget?: number; }
export interface PlannerContext {
  text: string; memoryIds: string[]; tokens: number; budget: number; omitted: string[];
  calibrations: Calibration[]; modules: string[]; warnings: string[];
}
/** The codes every engram host reports (docs/errors.md). */
export type ErrorCode = "invalid_input" | "not_found" | "unauthorized" | "forbidden" | "unavailable" | "buffer_full" | "sql_error" | "storage_error" | "corrupt" | "embedder_unavailable" | "model_error" | "internal";
export interface EngramError extends Error {
  code: ErrorCode;
  /** The HTTP status a server answers this code with (`httpStatus(code)`). */
  status: number;
  violations: { field: string; problem: string }[];
}
"#;
