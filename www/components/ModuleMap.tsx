"use client";
// The module map, drawn by Cytoscape: files as nodes (sized by their memories, coloured by
// folder) or modules (folders, their files merged), with the observer's co-access pairs
// (thicker for heavier) and the code's dependencies (dashed arrows) as edges. Choosing a
// file, on the graph or in the list beside it (the keyboard's way in), shows its memories
// and, on request, what a change to it impacts; choosing a module shows its files.
import { useCallback, useEffect, useRef, useState } from "react";
import Link from "next/link";
import type { Core } from "cytoscape";
import type { ImpactReport, ListPage, MapFile, ModuleMap as MapData } from "engram";
import { call } from "@/lib/client";
import MemoryCard from "./MemoryCard";
import { ErrorNote } from "./Notes";

const palette = ["#2454c5", "#1e7b43", "#a15c00", "#7a3db8", "#b42318", "#0e7c86", "#5b6475", "#c2410c", "#4d7c0f", "#be185d"];

function base(path: string) {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The id prefix of a module (folder) node. */
const MODULE = "module:";

/** Each file a node (sized by its memories, coloured by folder), each pair an edge. */
function fileElements(map: MapData) {
  const folders = [...new Set(map.files.map((f) => f.folder))];
  const most = Math.max(1, ...map.files.map((f) => f.memories));
  return [
    ...map.files.map((f) => ({
      data: {
        id: f.path,
        label: `${base(f.path)} (${f.memories})`,
        size: 18 + 30 * (f.memories / most),
        color: palette[folders.indexOf(f.folder) % palette.length],
      },
    })),
    ...map.coAccess.map((e, i) => ({ data: { id: `co${i}`, source: e.a, target: e.b, width: 1 + 6 * e.weight, kind: "co" } })),
    ...map.dependencies.map((e, i) => ({ data: { id: `dep${i}`, source: e.from, target: e.to, width: 1.5, kind: "dep" } })),
  ];
}

/** Each folder a node (its files' memories summed), the edges between its files and other
 * folders' merged: co-access weights summed (capped at 1), dependencies counted. */
function moduleElements(map: MapData) {
  const folderOf = new Map(map.files.map((f) => [f.path, f.folder]));
  const memories = new Map<string, number>();
  for (const f of map.files) memories.set(f.folder, (memories.get(f.folder) ?? 0) + f.memories);
  const most = Math.max(1, ...memories.values());
  const folders = [...memories.keys()];
  const merged = new Map<string, { a: string; b: string; kind: string; weight: number }>();
  const add = (a: string, b: string, kind: string, weight: number) => {
    const [x, y] = [folderOf.get(a), folderOf.get(b)];
    if (x === undefined || y === undefined || x === y) return;
    const key = `${kind}|${x}|${y}`;
    const edge = merged.get(key) ?? { a: x, b: y, kind, weight: 0 };
    edge.weight += weight;
    merged.set(key, edge);
  };
  for (const e of map.coAccess) add(e.a, e.b, "co", e.weight);
  for (const e of map.dependencies) add(e.from, e.to, "dep", 1);
  return [
    ...folders.map((folder, i) => ({
      data: {
        id: MODULE + folder,
        label: `${folder || "(root)"} (${memories.get(folder)})`,
        size: 22 + 34 * ((memories.get(folder) ?? 0) / most),
        color: palette[i % palette.length],
      },
    })),
    ...[...merged.values()].map((e, i) => ({
      data: {
        id: `m${i}`,
        source: MODULE + e.a,
        target: MODULE + e.b,
        width: e.kind === "co" ? 1 + 6 * Math.min(1, e.weight) : 1 + Math.min(5, e.weight),
        kind: e.kind,
      },
    })),
  ];
}

export default function ModuleMap() {
  const [map, setMap] = useState<MapData | null>(null);
  const [folder, setFolder] = useState("");
  const [view, setView] = useState<"files" | "modules">("files");
  const [selected, setSelected] = useState<MapFile | null>(null);
  const [memories, setMemories] = useState<ListPage | null>(null);
  const [impact, setImpact] = useState<ImpactReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const container = useRef<HTMLDivElement>(null);
  const graph = useRef<Core | null>(null);

  const load = useCallback(async (prefix: string) => {
    setError(null);
    try {
      setMap(await call<MapData>(`/api/map?folder=${encodeURIComponent(prefix)}`));
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);

  const choose = useCallback(async (file: MapFile) => {
    setSelected(file);
    setImpact(null);
    graph.current?.$("node").unselect();
    graph.current?.$id(file.path).select();
    try {
      setMemories(await call<ListPage>("/api/memories/list", { filter: { files: [file.path] }, limit: 50 }));
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);

  useEffect(() => {
    void load("");
  }, [load]);

  useEffect(() => {
    if (!map || !container.current) return;
    let cancelled = false;
    void import("cytoscape").then(({ default: cytoscape }) => {
      if (cancelled || !container.current) return;
      graph.current?.destroy();
      const cy = cytoscape({
        container: container.current,
        elements: view === "files" ? fileElements(map) : moduleElements(map),
        style: [
          {
            selector: "node",
            style: {
              "background-color": "data(color)",
              width: "data(size)",
              height: "data(size)",
              label: "data(label)",
              "font-size": 10,
              color: "#1d2330",
              "text-valign": "bottom",
              "text-margin-y": 3,
            },
          },
          { selector: "node:selected", style: { "border-width": 4, "border-color": "#f2b705" } },
          {
            selector: "edge[kind = 'co']",
            style: { width: "data(width)", "line-color": "#9aa6bd", "curve-style": "bezier", opacity: 0.8 },
          },
          {
            selector: "edge[kind = 'dep']",
            style: {
              width: "data(width)",
              "line-color": "#7a3db8",
              "line-style": "dashed",
              "target-arrow-shape": "triangle",
              "target-arrow-color": "#7a3db8",
              "curve-style": "bezier",
            },
          },
        ],
        // Strong gravity keeps the many small components (files with memories and no
        // edge between them) close to the connected core instead of in a long row.
        layout: {
          name: "cose",
          animate: false,
          nodeRepulsion: () => 6000,
          idealEdgeLength: () => 60,
          gravity: 4,
          componentSpacing: 30,
          numIter: 1500,
          padding: 16,
        },
        wheelSensitivity: 0.3,
      });
      cy.on("tap", "node", (event) => {
        const id: string = event.target.id();
        if (id.startsWith(MODULE)) {
          // A module opens as its files.
          const folder = id.slice(MODULE.length);
          setFolder(folder);
          setView("files");
          void load(folder);
          return;
        }
        const file = map.files.find((f) => f.path === id);
        if (file) void choose(file);
      });
      graph.current = cy;
    });
    return () => {
      cancelled = true;
    };
  }, [map, choose, view, load]);

  useEffect(() => () => graph.current?.destroy(), []);

  async function showImpact() {
    if (!selected) return;
    try {
      setImpact(await call<ImpactReport>(`/api/impact?target=${encodeURIComponent(selected.path)}`));
    } catch (e) {
      setError((e as Error).message);
    }
  }

  return (
    <>
      <h1>Module map</h1>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          setSelected(null);
          void load(folder);
        }}
      >
        <label>
          Folder
          <input type="text" value={folder} onChange={(e) => setFolder(e.target.value)} placeholder="src/ (all when empty)" />
        </label>
        <label>
          Show
          <select value={view} onChange={(e) => setView(e.target.value as "files" | "modules")}>
            <option value="files">files</option>
            <option value="modules">modules (folders)</option>
          </select>
        </label>
        <button type="submit">Show</button>
        {map && (
          <span className="muted" data-testid="map-summary">
            {map.files.length} files · {map.coAccess.length} co-access pairs · {map.dependencies.length} dependencies
          </span>
        )}
      </form>
      <ErrorNote error={error} />
      <p className="muted">
        Node size: memories about the file (or the module&apos;s files); colour: its folder. Solid edges: files agents open together (thicker is more often). Dashed
        arrows: code dependencies.
      </p>
      <div className="split">
        <div ref={container} className="graph" role="img" aria-label="Graph of the project's files and how they relate" data-testid="graph" />
        <section className="card" aria-labelledby="node-heading">
          {selected ? (
            <>
              <h2 id="node-heading" style={{ overflowWrap: "anywhere" }}>
                {selected.path}
              </h2>
              <p className="muted">
                {selected.memories} memories · opened {selected.accesses} times in {selected.sessions} sessions
              </p>
              <div className="row">
                <button type="button" onClick={() => void showImpact()}>
                  Impact of a change
                </button>
                <Link href={`/memories?file=${encodeURIComponent(selected.path)}`}>Open in the browser</Link>
              </div>
              {impact && (
                <div data-testid="impact">
                  <h3>Impacted files ({impact.files.length})</h3>
                  <ul>
                    {impact.files.slice(0, 20).map((f) => (
                      <li key={f.path}>
                        {f.path} <span className="muted">(depth {f.depth})</span>
                      </li>
                    ))}
                  </ul>
                  <p className="muted">{impact.memories.length} memories attached to what it impacts</p>
                </div>
              )}
              <h3>Its memories</h3>
              <ul className="memories bounded" data-testid="node-memories">
                {memories?.memories.map((m) => (
                  <MemoryCard key={m.id} memory={m} />
                ))}
              </ul>
            </>
          ) : (
            <>
              <h2 id="node-heading">Files on the map</h2>
              <p className="muted">Choose a file to see its memories.</p>
            </>
          )}
          <ul className="memories bounded" aria-label="Files on the map" data-testid="map-files" tabIndex={0}>
            {map?.files.map((f) => (
              <li key={f.path}>
                <button type="button" className="plain" onClick={() => void choose(f)} style={{ width: "100%", textAlign: "left", overflowWrap: "anywhere" }}>
                  {f.path} · {f.memories}
                </button>
              </li>
            ))}
          </ul>
        </section>
      </div>
    </>
  );
}
