"use client";
// One memory's page: every field, where it came from (sessions, commit, the instruction
// file and lines that state it), its history as a timeline, and what a person can do to
// it in place: confirm, edit (a correction), flag as wrong, pin, forget or restore.
import { useCallback, useEffect, useState } from "react";
import type { HistoryEntry, Memory, RuleOrigin } from "engram";
import { call, when, words } from "@/lib/client";
import { StateChips } from "./MemoryCard";
import { ErrorNote } from "./Notes";

interface Detail {
  memory: Memory;
  history: HistoryEntry[];
  origins: RuleOrigin[];
}

function Field({ name, children }: { name: string; children: React.ReactNode }) {
  return (
    <tr>
      <th scope="row">{name}</th>
      <td>{children}</td>
    </tr>
  );
}

function change(entry: HistoryEntry): string {
  // An observer memory's evidence is shown, worded, among the fields.
  if (entry.action === "created" && evidence([entry])) return "";
  const show = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));
  if (entry.before !== undefined && entry.after !== undefined) return `${show(entry.before)} → ${show(entry.after)}`;
  if (entry.after !== undefined) return show(entry.after);
  return "";
}

/** What an observer memory stands on, from its `created` entry: signal, session, steps. */
function evidence(history: HistoryEntry[]): string | null {
  const created = history.find((h) => h.action === "created");
  const after = created?.after as { signal?: string; session?: string; steps?: number[] } | undefined;
  if (!after?.steps) return null;
  const steps = after.steps.length === 1 ? `step ${after.steps[0]}` : `steps ${after.steps.join(", ")}`;
  return `${words(after.signal ?? "observed")} at ${steps} of session ${after.session ?? "?"}`;
}

export default function MemoryDetail({ id }: { id: string }) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState("");
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setDetail(await call<Detail>(`/api/memories/${encodeURIComponent(id)}`));
    } catch (e) {
      setError((e as Error).message);
    }
  }, [id]);

  useEffect(() => {
    void load();
  }, [load]);

  async function act(action: string, extra: Record<string, unknown> = {}, done = "") {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      setDetail(await call<Detail>(`/api/memories/${encodeURIComponent(id)}`, { action, ...extra }));
      setNotice(done);
      setEditing(false);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }

  if (!detail) return error ? <ErrorNote error={error} /> : <p aria-live="polite">Loading…</p>;
  const m = detail.memory;
  const live = !m.deprecated;
  return (
    <>
      <h1>Memory</h1>
      <div className="chips" data-testid="state">
        <StateChips memory={m} />
      </div>
      {editing ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void act("edit", { update: { content: draft } }, "Saved as your correction: the memory is user-verified.");
          }}
        >
          <label>
            Text
            <textarea value={draft} onChange={(e) => setDraft(e.target.value)} />
          </label>
          <div className="row">
            <button type="submit" disabled={busy}>
              Save correction
            </button>
            <button type="button" className="plain" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <p style={{ fontSize: "1.1rem", overflowWrap: "anywhere" }} data-testid="content">
          {m.content}
        </p>
      )}
      <div className="row" role="group" aria-label="Judge this memory">
        {live && !m.flags.userVerified && (
          <button type="button" disabled={busy} onClick={() => void act("confirm", {}, "Confirmed: user-verified.")}>
            Confirm
          </button>
        )}
        {live && !editing && (
          <button
            type="button"
            className="plain"
            disabled={busy}
            onClick={() => {
              setDraft(m.content);
              setEditing(true);
            }}
          >
            Edit
          </button>
        )}
        {live && (
          <button
            type="button"
            className="plain"
            disabled={busy}
            onClick={() => void act(m.flags.pinned ? "unpin" : "pin", {}, m.flags.pinned ? "Unpinned." : "Pinned: it never decays.")}
          >
            {m.flags.pinned ? "Unpin" : "Pin"}
          </button>
        )}
        {live && (
          <>
            <label>
              Why is it wrong?
              <input type="text" value={reason} onChange={(e) => setReason(e.target.value)} />
            </label>
            <button
              type="button"
              className="danger"
              disabled={busy}
              onClick={() => void act("flag", { reason: reason || undefined }, "Flagged wrong: retired.")}
            >
              Flag wrong
            </button>
            <button type="button" className="danger" disabled={busy} onClick={() => void act("forget", {}, "Forgotten.")}>
              Forget
            </button>
          </>
        )}
        {!live && !m.supersededBy && (
          <button type="button" disabled={busy} onClick={() => void act("restore", {}, "Restored: live again.")}>
            Restore
          </button>
        )}
      </div>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorNote error={error} />
      <div className="split" style={{ marginTop: "1rem" }}>
        <section className="card" aria-labelledby="fields-heading">
          <h2 id="fields-heading">Fields and provenance</h2>
          <div className="scroll">
            <table>
              <tbody>
                <Field name="id">
                  <code>{m.id}</code>
                </Field>
                <Field name="type">{words(m.type)}</Field>
                <Field name="source">{words(m.source)}</Field>
                <Field name="confidence">{m.confidence.toFixed(2)}</Field>
                <Field name="scope / visibility">
                  {m.scope} / {m.visibility}
                </Field>
                <Field name="files">{m.relatedFiles.join(", ") || "—"}</Field>
                <Field name="modules">{m.relatedModules.join(", ") || "—"}</Field>
                <Field name="tags">{m.tags.join(", ") || "—"}</Field>
                <Field name="created">{when(m.createdAt)}</Field>
                <Field name="last used">
                  {when(m.lastAccessedAt)} ({m.accessCount} uses)
                </Field>
                <Field name="said">{m.occurrences} times</Field>
                <Field name="phase">{m.phase ?? "—"}</Field>
                <Field name="session">{m.sessionId ?? "—"}</Field>
                <Field name="evidence sessions">{m.provenanceSessionIds.join(", ") || "—"}</Field>
                <Field name="evidence">
                  <span data-testid="evidence">{evidence(detail.history) ?? "—"}</span>
                </Field>
                <Field name="commit">{m.commitSha ?? "—"}</Field>
                <Field name="instruction file">
                  {detail.origins.length === 0
                    ? "—"
                    : detail.origins.map((o) => (
                        <div key={`${o.file}:${o.line}`} data-testid="origin">
                          {o.file}:{o.line}
                          {o.endLine > o.line ? `–${o.endLine}` : ""}
                          {o.section ? ` (${o.section})` : ""}
                        </div>
                      ))}
                </Field>
                <Field name="citation">{m.citationText ?? "—"}</Field>
                {m.staleReason && <Field name="stale because">{m.staleReason}</Field>}
                {m.supersededBy && (
                  <Field name="superseded by">
                    <a href={`/memories/${m.supersededBy}`}>{m.supersededBy}</a>
                  </Field>
                )}
                {m.relations.length > 0 && (
                  <Field name="relations">
                    {m.relations.map((r) => (
                      <div key={`${r.relationType}:${r.targetMemoryId ?? r.targetFilePath ?? ""}`}>
                        {words(r.relationType)}{" "}
                        {r.targetMemoryId ? <a href={`/memories/${r.targetMemoryId}`}>{r.targetMemoryId}</a> : r.targetFilePath}
                      </div>
                    ))}
                  </Field>
                )}
              </tbody>
            </table>
          </div>
        </section>
        <section className="card" aria-labelledby="history-heading">
          <h2 id="history-heading">History</h2>
          <ol className="timeline" data-testid="history">
            {detail.history.map((entry, i) => (
              <li key={i} data-action={entry.action}>
                <b>{words(entry.action)}</b> <span className="muted">by {entry.actor} · {when(entry.at)}</span>
                {entry.reason && <div>{entry.reason}</div>}
                {change(entry) && <div className="muted" style={{ overflowWrap: "anywhere" }}>{change(entry)}</div>}
              </li>
            ))}
          </ol>
        </section>
      </div>
    </>
  );
}
