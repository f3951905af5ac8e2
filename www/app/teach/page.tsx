import Teach from "@/components/Teach";

export default function TeachPage() {
  return <Teach />;
}
