"use client";
// The memory browser: filter the project's memories (type, source, state, file, words) in
// pages, or search them through the full pipeline and open each hit's score breakdown.
import { useCallback, useEffect, useState } from "react";
import { useSearchParams } from "next/navigation";
import type { ListPage, Memory, MemoryFilter, SearchResponse } from "engram";
import { call } from "@/lib/client";
import { MEMORY_SOURCES, MEMORY_TYPES } from "@/lib/vocabulary";
import MemoryCard from "./MemoryCard";
import Breakdown from "./Breakdown";
import { ErrorNote, Options } from "./Notes";

/** A page of the listing and how many memories the filter matches in all. */
type Listed = ListPage & { total: number };

interface Filters {
  type: string;
  source: string;
  status: "live" | "retired" | "all";
  needsReview: boolean;
  pinned: boolean;
  file: string;
  text: string;
}

function toFilter(f: Filters): MemoryFilter {
  const filter: MemoryFilter = { status: f.status };
  if (f.type) filter.types = [f.type as Memory["type"]];
  if (f.source) filter.sources = [f.source as Memory["source"]];
  if (f.needsReview) filter.needsReview = true;
  if (f.pinned) filter.pinned = true;
  if (f.file) filter.files = [f.file];
  if (f.text.trim()) filter.text = f.text.trim();
  return filter;
}

export default function MemoryBrowser() {
  const params = useSearchParams();
  const [filters, setFilters] = useState<Filters>({
    type: params.get("type") ?? "",
    source: params.get("source") ?? "",
    status: "live",
    needsReview: params.get("needsReview") === "1",
    pinned: false,
    file: params.get("file") ?? "",
    text: "",
  });
  const [page, setPage] = useState<ListPage | null>(null);
  const [total, setTotal] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<SearchResponse | null>(null);
  const [open, setOpen] = useState<Set<string>>(new Set());

  const load = useCallback(async (f: Filters, cursor?: string) => {
    setError(null);
    try {
      const next = await call<Listed>("/api/memories/list", { filter: toFilter(f), limit: 50, cursor });
      setPage((prev) => (cursor && prev ? { memories: [...prev.memories, ...next.memories], nextCursor: next.nextCursor } : next));
      setTotal(next.total);
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);

  useEffect(() => {
    void load(filters);
    // Only the first render loads by itself; later loads follow the form.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  async function search(event: React.FormEvent) {
    event.preventDefault();
    if (!query.trim()) {
      setResults(null);
      return;
    }
    setError(null);
    try {
      setResults(await call<SearchResponse>("/api/search", { text: query, limit: 20 }));
    } catch (e) {
      setError((e as Error).message);
    }
  }

  function toggle(id: string) {
    setOpen((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }

  const set = <K extends keyof Filters>(key: K, value: Filters[K]) => setFilters((f) => ({ ...f, [key]: value }));

  return (
    <>
      <h1>Memories</h1>
      <section className="card" aria-labelledby="search-heading">
        <h2 id="search-heading">Search</h2>
        <form className="row" onSubmit={search} role="search">
          <label style={{ flex: "1 1 16rem" }}>
            Query
            <input type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="what the agent would ask" />
          </label>
          <button type="submit">Search</button>
        </form>
        {results && (
          <div aria-live="polite">
            <p className="muted" data-testid="search-summary">
              {results.hits.length} hits · {results.queryType} query · {results.candidates} candidates ·{" "}
              {(results.timings.total / 1000).toFixed(1)} ms
              {results.emptyReason ? ` · ${results.emptyReason}` : ""}
            </p>
            <ol className="memories">
              {results.hits.map((hit) => (
                <MemoryCard key={hit.memory.id} memory={hit.memory}>
                  <div className="row">
                    <span className="chip">relevance {hit.breakdown.relevance.toFixed(2)}</span>
                    <button
                      type="button"
                      className="plain"
                      aria-expanded={open.has(hit.memory.id)}
                      onClick={() => toggle(hit.memory.id)}
                    >
                      {open.has(hit.memory.id) ? "Hide" : "Why this rank?"}
                    </button>
                  </div>
                  {open.has(hit.memory.id) && <Breakdown parts={hit.breakdown} />}
                </MemoryCard>
              ))}
            </ol>
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="browse-heading" style={{ marginTop: "1rem" }}>
        <h2 id="browse-heading">Browse</h2>
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            void load(filters);
          }}
        >
          <label>
            Type
            <select value={filters.type} onChange={(e) => set("type", e.target.value)}>
              <option value="">any</option>
              <Options names={MEMORY_TYPES} />
            </select>
          </label>
          <label>
            Source
            <select value={filters.source} onChange={(e) => set("source", e.target.value)}>
              <option value="">any</option>
              <Options names={MEMORY_SOURCES} />
            </select>
          </label>
          <label>
            State
            <select value={filters.status} onChange={(e) => set("status", e.target.value as Filters["status"])}>
              <option value="live">live</option>
              <option value="retired">retired</option>
              <option value="all">all</option>
            </select>
          </label>
          <label>
            File
            <input type="text" value={filters.file} onChange={(e) => set("file", e.target.value)} placeholder="src/app.ts" />
          </label>
          <label>
            Words
            <input type="text" value={filters.text} onChange={(e) => set("text", e.target.value)} />
          </label>
          <label className="inline">
            <input type="checkbox" checked={filters.needsReview} onChange={(e) => set("needsReview", e.target.checked)} />
            needs review
          </label>
          <label className="inline">
            <input type="checkbox" checked={filters.pinned} onChange={(e) => set("pinned", e.target.checked)} />
            pinned
          </label>
          <button type="submit">Apply filters</button>
        </form>
        <ErrorNote error={error} />
        {page && (
          <>
            <p className="muted" aria-live="polite" data-testid="list-summary">
              {total} memories match · showing {page.memories.length}
            </p>
            <ul className="memories">
              {page.memories.map((memory) => (
                <MemoryCard key={memory.id} memory={memory} />
              ))}
            </ul>
            {page.nextCursor && (
              <button type="button" className="plain" onClick={() => void load(filters, page.nextCursor)}>
                Load more
              </button>
            )}
          </>
        )}
      </section>
    </>
  );
}
