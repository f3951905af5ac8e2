import { Suspense } from "react";
import MemoryBrowser from "@/components/MemoryBrowser";

export default function MemoriesPage() {
  return (
    <Suspense fallback={<p>Loading…</p>}>
      <MemoryBrowser />
    </Suspense>
  );
}
