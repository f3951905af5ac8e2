import Dashboard from "@/components/Dashboard";

export default function HealthPage() {
  return <Dashboard />;
}
