"use client";
// The health dashboard: the score and its parts, memories added and retired by week (and
// added by type and by source), live memories by type and by source, the review backlog
// and retired counts, and coverage per folder, as charts.
import { useEffect, useState } from "react";
import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  Legend,
  Pie,
  PieChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import type { HealthReport, TrustSetting } from "engram";
import { call, words } from "@/lib/client";
import { ErrorNote } from "./Notes";

interface Overview {
  health: HealthReport;
  trust: TrustSetting;
  counts: { needsReview: number; stale: number; superseded: number; pinned: number; retired: number };
  model: string | null;
  projectId: string;
}

const palette = ["#2454c5", "#1e7b43", "#a15c00", "#7a3db8", "#b42318", "#0e7c86", "#5b6475", "#c2410c", "#4d7c0f", "#be185d"];

function Chart({ title, children }: { title: string; children: React.ReactElement }) {
  return (
    <figure className="card" aria-label={title} style={{ margin: 0 }}>
      <h2>{title}</h2>
      <div className="chart">
        <ResponsiveContainer width="100%" height="100%">
          {children}
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

/** A camelCase name as words: `reviewBacklog` → `review backlog`. */
function spaced(name: string) {
  return name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

type Part = "byType" | "bySource";

/** Every type (or source) added in some week of the report. */
function names(health: HealthReport, part: Part): string[] {
  return [...new Set(health.growth.flatMap((week) => Object.keys(week[part])))].sort();
}

/** One row per week, a column per type (or source), for stacked bars. */
function weekly(health: HealthReport, part: Part) {
  return health.growth.map((week) => ({ week: week.week, ...week[part] }));
}

function pairs(record: Record<string, number>) {
  return Object.entries(record)
    .map(([name, value]) => ({ name: words(name), value }))
    .sort((a, b) => b.value - a.value);
}

export default function Dashboard() {
  const [overview, setOverview] = useState<Overview | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    call<Overview>("/api/overview").then(setOverview, (e) => setError(String(e.message ?? e)));
  }, []);
  if (error) return <ErrorNote error={error} />;
  if (!overview) return <p aria-live="polite">Loading health…</p>;
  const { health, counts, trust } = overview;
  const parts = health.parts.map((p) => ({ name: spaced(p.name), share: Math.round(p.share * 100), detail: p.detail }));
  const folders = health.folders.slice(0, 12).map((f) => ({ name: f.folder || "(root)", memories: f.memories }));
  const backlog = [
    { name: "needs review", value: counts.needsReview },
    { name: "stale", value: counts.stale },
    { name: "superseded", value: counts.superseded },
    { name: "retired", value: counts.retired },
    { name: "pinned", value: counts.pinned },
  ];
  return (
    <>
      <h1>Memory health</h1>
      <div className="stats">
        <div className="stat" data-testid="health-score">
          <span>Health score</span>
          <b className="score">{health.score}</b>
        </div>
        <div className="stat">
          <span>Live memories</span>
          <b data-testid="live-count">{health.live}</b>
        </div>
        <div className="stat">
          <span>Waiting for review</span>
          <b>{counts.needsReview}</b>
        </div>
        <div className="stat">
          <span>Stale</span>
          <b>{counts.stale}</b>
        </div>
        <div className="stat">
          <span>Superseded</span>
          <b>{counts.superseded}</b>
        </div>
        <div className="stat">
          <span>Trust level</span>
          <b>
            {trust.level} · {trust.name}
          </b>
        </div>
      </div>
      <p className="muted">
        Project <code>{overview.projectId}</code> · searches{" "}
        {overview.model ? `hybrid with ${overview.model}` : "keyword and graph only (no model found)"}
      </p>
      <div className="grid">
        <Chart title="Score parts (% of each part's best)">
          <BarChart data={parts} layout="vertical" margin={{ left: 24, right: 16 }} accessibilityLayer>
            <CartesianGrid strokeDasharray="3 3" horizontal={false} />
            <XAxis type="number" domain={[0, 100]} />
            <YAxis type="category" dataKey="name" width={130} interval={0} tick={{ fontSize: 12 }} />
            <Tooltip formatter={(value, _name, item) => [`${value}% — ${item.payload.detail}`, "share"]} />
            <Bar dataKey="share" fill={palette[0]} isAnimationActive={false} />
          </BarChart>
        </Chart>
        <Chart title="Memories added and retired per week">
          <BarChart data={health.growth} margin={{ right: 16 }} accessibilityLayer>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="week" />
            <YAxis allowDecimals={false} />
            <Tooltip />
            <Legend />
            <Bar dataKey="added" fill={palette[1]} isAnimationActive={false} />
            <Bar dataKey="retired" fill={palette[4]} isAnimationActive={false} />
          </BarChart>
        </Chart>
        <Chart title="Added per week, by type">
          <BarChart data={weekly(health, "byType")} margin={{ right: 16 }} accessibilityLayer>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="week" />
            <YAxis allowDecimals={false} />
            <Tooltip />
            <Legend />
            {names(health, "byType").map((name, i) => (
              <Bar key={name} dataKey={name} name={words(name)} stackId="type" fill={palette[i % palette.length]} isAnimationActive={false} />
            ))}
          </BarChart>
        </Chart>
        <Chart title="Added per week, by source">
          <BarChart data={weekly(health, "bySource")} margin={{ right: 16 }} accessibilityLayer>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="week" />
            <YAxis allowDecimals={false} />
            <Tooltip />
            <Legend />
            {names(health, "bySource").map((name, i) => (
              <Bar key={name} dataKey={name} name={words(name)} stackId="source" fill={palette[(i + 3) % palette.length]} isAnimationActive={false} />
            ))}
          </BarChart>
        </Chart>
        <Chart title="Live memories by type">
          <BarChart data={pairs(health.byType)} layout="vertical" margin={{ left: 24, right: 16 }} accessibilityLayer>
            <CartesianGrid strokeDasharray="3 3" horizontal={false} />
            <XAxis type="number" allowDecimals={false} />
            <YAxis type="category" dataKey="name" width={130} interval={0} tick={{ fontSize: 12 }} />
            <Tooltip />
            <Bar dataKey="value" name="memories" fill={palette[3]} isAnimationActive={false} />
          </BarChart>
        </Chart>
        <Chart title="Live memories by source">
          <PieChart accessibilityLayer>
            <Pie data={pairs(health.bySource)} dataKey="value" nameKey="name" outerRadius="70%" label isAnimationActive={false}>
              {pairs(health.bySource).map((entry, i) => (
                <Cell key={entry.name} fill={palette[i % palette.length]} />
              ))}
            </Pie>
            <Tooltip />
            <Legend />
          </PieChart>
        </Chart>
        <Chart title="Review backlog and retired">
          <BarChart data={backlog} margin={{ right: 16 }} accessibilityLayer>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="name" interval={0} tick={{ fontSize: 11 }} />
            <YAxis allowDecimals={false} />
            <Tooltip />
            <Bar dataKey="value" name="memories" isAnimationActive={false}>
              {backlog.map((entry, i) => (
                <Cell key={entry.name} fill={palette[(i + 2) % palette.length]} />
              ))}
            </Bar>
          </BarChart>
        </Chart>
        <Chart title="Coverage: memories per folder">
          <BarChart data={folders} layout="vertical" margin={{ left: 24, right: 16 }} accessibilityLayer>
            <CartesianGrid strokeDasharray="3 3" horizontal={false} />
            <XAxis type="number" allowDecimals={false} />
            <YAxis type="category" dataKey="name" width={150} interval={0} tick={{ fontSize: 12 }} />
            <Tooltip />
            <Bar dataKey="memories" fill={palette[5]} isAnimationActive={false} />
          </BarChart>
        </Chart>
      </div>
    </>
  );
}
