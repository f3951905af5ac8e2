"use client";
// Teach: write a memory and see the exact text an agent would be given for it (with its
// citation chip) before saving; import an instruction file (CLAUDE.md, AGENTS.md,
// .cursorrules, Cursor and Windsurf rules, Copilot instructions) by upload.
import { useState } from "react";
import Link from "next/link";
import type { ImportReport, MemoryType, PackedContext, Remembered } from "engram";
import { call, words } from "@/lib/client";
import { MEMORY_TYPES } from "@/lib/vocabulary";
import { ErrorNote, Options } from "./Notes";

function list(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function TeachForm() {
  const [content, setContent] = useState("");
  const [type, setType] = useState<MemoryType>("preference");
  const [files, setFiles] = useState("");
  const [tags, setTags] = useState("");
  const [preview, setPreview] = useState<PackedContext | null>(null);
  const [saved, setSaved] = useState<Remembered | null>(null);
  const [error, setError] = useState<string | null>(null);
  const taught = () => ({ content, type, relatedFiles: list(files), tags: list(tags) });

  async function run(action: "preview" | "save") {
    setError(null);
    setSaved(null);
    try {
      if (action === "preview") setPreview(await call<PackedContext>("/api/teach/preview", taught()));
      else setSaved(await call<Remembered>("/api/teach", taught()));
    } catch (e) {
      setError((e as Error).message);
    }
  }

  return (
    <section className="card" aria-labelledby="teach-heading">
      <h2 id="teach-heading">Write a memory</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run("preview");
        }}
      >
        <label>
          What should agents know?
          <textarea value={content} onChange={(e) => setContent(e.target.value)} required />
        </label>
        <div className="row" style={{ marginTop: "0.6rem" }}>
          <label>
            Type
            <select value={type} onChange={(e) => setType(e.target.value as MemoryType)}>
              <Options names={MEMORY_TYPES} />
            </select>
          </label>
          <label>
            Files (comma-separated)
            <input type="text" value={files} onChange={(e) => setFiles(e.target.value)} />
          </label>
          <label>
            Tags (comma-separated)
            <input type="text" value={tags} onChange={(e) => setTags(e.target.value)} />
          </label>
        </div>
        <div className="row" style={{ marginTop: "0.6rem" }}>
          <button type="submit" className="plain">
            Preview
          </button>
          <button type="button" onClick={() => void run("save")} disabled={!content.trim()}>
            Save
          </button>
        </div>
      </form>
      <ErrorNote error={error} />
      {preview && (
        <>
          <h3>How an agent would see it ({preview.tokens} tokens)</h3>
          <pre className="packed" data-testid="preview">
            {preview.text}
          </pre>
        </>
      )}
      {saved && (
        <p className="notice" role="status" data-testid="saved">
          {saved.merged ? "Merged into a memory that says the same: " : "Saved: "}
          <Link href={`/memories/${saved.id}`}>{saved.id}</Link>
          {saved.redacted.length > 0 ? ` (redacted: ${saved.redacted.join(", ")})` : ""}
        </p>
      )}
    </section>
  );
}

function ImportForm() {
  const [path, setPath] = useState("");
  const [text, setText] = useState<string | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function pick(event: React.ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    if (!file) return;
    setText(await file.text());
    if (!path) setPath(file.name);
  }

  async function upload(event: React.FormEvent) {
    event.preventDefault();
    if (text === null) return;
    setBusy(true);
    setError(null);
    try {
      setReport(await call<ImportReport>("/api/import", { files: [{ path, text }] }));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }

  const rules = report?.files.flatMap((f) => f.rules) ?? [];
  return (
    <section className="card" aria-labelledby="import-heading" style={{ marginTop: "1rem" }}>
      <h2 id="import-heading">Import an instruction file</h2>
      <form className="row" onSubmit={upload}>
        <label>
          File
          <input type="file" onChange={pick} accept=".md,.mdc,.txt,.cursorrules,text/*" data-testid="import-file" />
        </label>
        <label style={{ flex: "1 1 14rem" }}>
          Its path in the project (decides the format)
          <input type="text" value={path} onChange={(e) => setPath(e.target.value)} placeholder="CLAUDE.md or .cursor/rules/x.mdc" />
        </label>
        <button type="submit" disabled={busy || text === null || !path}>
          Import
        </button>
      </form>
      <ErrorNote error={error} />
      {report && (
        <div aria-live="polite">
          {report.files.map((f) => (
            <p key={f.path} className="notice" data-testid="import-summary">
              {f.path} ({f.format}): {f.rules.length} rules
              {f.unchangedFile ? ", unchanged since the last import" : ""}
              {f.retired.length ? `, ${f.retired.length} retired` : ""}
            </p>
          ))}
          <div className="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">line</th>
                  <th scope="col">outcome</th>
                  <th scope="col">type</th>
                  <th scope="col">rule</th>
                </tr>
              </thead>
              <tbody>
                {rules.map((r) => (
                  <tr key={`${r.id}:${r.line}`}>
                    <td>{r.line}</td>
                    <td>{r.outcome}</td>
                    <td>{words(r.type)}</td>
                    <td>
                      <Link href={`/memories/${r.id}`}>{r.text}</Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
    </section>
  );
}

export default function Teach() {
  return (
    <>
      <h1>Teach</h1>
      <TeachForm />
      <ImportForm />
    </>
  );
}
