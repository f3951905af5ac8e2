// One memory in a list: its text, type, source, state and files, linking to its page.
import Link from "next/link";
import type { Memory } from "engram";
import { when, words } from "@/lib/client";

export function StateChips({ memory }: { memory: Memory }) {
  const retired = memory.deprecated;
  return (
    <>
      <span className="chip">{words(memory.type)}</span>
      <span className="chip">{words(memory.source)}</span>
      <span className="chip">confidence {memory.confidence.toFixed(2)}</span>
      {memory.flags.userVerified && <span className="chip good">user-verified</span>}
      {memory.flags.needsReview && <span className="chip warn">needs review</span>}
      {memory.flags.pinned && <span className="chip good">pinned</span>}
      {memory.staleReason && <span className="chip warn">stale</span>}
      {memory.supersededBy && <span className="chip bad">superseded</span>}
      {retired && !memory.supersededBy && <span className="chip bad">retired</span>}
    </>
  );
}

export default function MemoryCard({ memory, children }: { memory: Memory; children?: React.ReactNode }) {
  return (
    <li className="memory" data-testid="memory" data-id={memory.id}>
      <div className="chips">
        <StateChips memory={memory} />
      </div>
      <p>
        <Link href={`/memories/${memory.id}`}>{memory.content}</Link>
      </p>
      <div className="chips muted">
        {memory.relatedFiles.slice(0, 4).map((file) => (
          <span key={file} className="chip">
            {file}
          </span>
        ))}
        <span>{when(memory.createdAt)}</span>
      </div>
      {children}
    </li>
  );
}
