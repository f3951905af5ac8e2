"use client";
// Session review: the sessions engram saw last, and for the one chosen what it was shown
// (applied), what it learned that waits for a person (one-click confirm, edit or flag),
// what needed no review, and the reading memory saved it.
import { useCallback, useEffect, useState } from "react";
import type { Memory, SessionReview as Review, SessionSummary } from "engram";
import { call, when } from "@/lib/client";
import MemoryCard from "./MemoryCard";
import { ErrorNote } from "./Notes";

function Judge({ memory, onDone }: { memory: Memory; onDone: (message: string) => void }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(memory.content);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function act(action: string, extra: Record<string, unknown>, message: string) {
    setBusy(true);
    setError(null);
    try {
      await call(`/api/memories/${memory.id}`, { action, ...extra });
      onDone(message);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div>
      {editing && (
        <label>
          Corrected text
          <textarea value={draft} onChange={(e) => setDraft(e.target.value)} />
        </label>
      )}
      <div className="row" role="group" aria-label="Judge this memory">
        {editing ? (
          <>
            <button type="button" disabled={busy} onClick={() => void act("edit", { update: { content: draft } }, "Corrected.")}>
              Save correction
            </button>
            <button type="button" className="plain" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </>
        ) : (
          <>
            <button type="button" disabled={busy} onClick={() => void act("confirm", {}, "Confirmed.")}>
              Confirm
            </button>
            <button type="button" className="plain" disabled={busy} onClick={() => setEditing(true)}>
              Edit
            </button>
            <button type="button" className="danger" disabled={busy} onClick={() => void act("flag", {}, "Flagged wrong.")}>
              Flag wrong
            </button>
          </>
        )}
      </div>
      <ErrorNote error={error} />
    </div>
  );
}

function Part({ title, memories, judge, onDone }: { title: string; memories: Memory[]; judge?: boolean; onDone: (m: string) => void }) {
  if (memories.length === 0) return null;
  return (
    <section aria-label={title}>
      <h3>
        {title} ({memories.length})
      </h3>
      <ul className="memories">
        {memories.map((memory) => (
          <MemoryCard key={memory.id} memory={memory}>
            {judge && <Judge memory={memory} onDone={onDone} />}
          </MemoryCard>
        ))}
      </ul>
    </section>
  );
}

export default function SessionReview() {
  const [sessions, setSessions] = useState<SessionSummary[] | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const [review, setReview] = useState<Review | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const loadSessions = useCallback(async () => {
    try {
      const list = await call<SessionSummary[]>("/api/sessions");
      setSessions(list);
      return list;
    } catch (e) {
      setError((e as Error).message);
      return [];
    }
  }, []);

  const open = useCallback(async (id: string) => {
    setChosen(id);
    try {
      setReview(await call<Review | null>(`/api/sessions/${encodeURIComponent(id)}`));
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);

  useEffect(() => {
    void loadSessions().then((list) => {
      const first = list.find((s) => s.needsReview > 0) ?? list[0];
      if (first) void open(first.sessionId);
    });
  }, [loadSessions, open]);

  function done(message: string) {
    setNotice(message);
    if (chosen) void open(chosen);
    void loadSessions();
  }

  return (
    <>
      <h1>Sessions</h1>
      <ErrorNote error={error} />
      <div className="split">
        <section className="card" aria-labelledby="review-heading">
          <h2 id="review-heading">{chosen ? `Session ${chosen}` : "No session yet"}</h2>
          {notice && (
            <p className="notice" role="status">
              {notice}
            </p>
          )}
          {review && (
            <>
              <div className="stats">
                <div className="stat">
                  <span>Tokens saved (est.)</span>
                  <b data-testid="tokens-saved">{review.estimatedTokensSaved.toLocaleString("en")}</b>
                </div>
                <div className="stat">
                  <span>Applied</span>
                  <b>{review.applied.length}</b>
                </div>
                <div className="stat">
                  <span>Learned</span>
                  <b>{review.needsReview.length + review.autoConfirmed.length + review.learned.length}</b>
                </div>
                <div className="stat">
                  <span>Trust level</span>
                  <b>{review.trust.name}</b>
                </div>
              </div>
              {review.suggestedLevel && (
                <p className="notice">
                  You flagged {review.flaggedWrong} of this session&apos;s memories wrong: a more cautious trust level (
                  {review.suggestedLevel}) would make every new memory wait for you.
                </p>
              )}
              <Part title="Waiting for your review" memories={review.needsReview} judge onDone={done} />
              <Part title="Learned" memories={review.learned} judge onDone={done} />
              <Part title="Confirmed by the trust level" memories={review.autoConfirmed} onDone={done} />
              <Part title="Applied (shown to the agent)" memories={review.applied} onDone={done} />
            </>
          )}
        </section>
        <section className="card" aria-labelledby="sessions-heading">
          <h2 id="sessions-heading">Last sessions</h2>
          {sessions && sessions.length === 0 && <p className="muted">No session has used engram yet.</p>}
          <ul className="memories" data-testid="sessions">
            {sessions?.map((s) => (
              <li key={s.sessionId} className="memory">
                <button
                  type="button"
                  className={s.sessionId === chosen ? "" : "plain"}
                  aria-pressed={s.sessionId === chosen}
                  onClick={() => void open(s.sessionId)}
                  style={{ width: "100%", textAlign: "left" }}
                >
                  <span style={{ overflowWrap: "anywhere" }}>{s.sessionId}</span> · {when(s.lastSeenAt)}
                </button>
                <div className="chips muted" style={{ marginTop: "0.3rem" }}>
                  {s.outcome && <span className={`chip ${s.outcome === "success" ? "good" : "warn"}`}>{s.outcome}</span>}
                  <span className="chip">{s.steps} steps</span>
                  <span className="chip">{s.shown} shown</span>
                  <span className="chip">{s.learned} learned</span>
                  {s.needsReview > 0 && <span className="chip warn">{s.needsReview} to review</span>}
                </div>
              </li>
            ))}
          </ul>
        </section>
      </div>
    </>
  );
}
