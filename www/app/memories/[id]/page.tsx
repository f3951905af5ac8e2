import MemoryDetail from "@/components/MemoryDetail";

export default async function MemoryPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <MemoryDetail id={id} />;
}
