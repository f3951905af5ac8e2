import ModuleMap from "@/components/ModuleMap";

export default function MapPage() {
  return <ModuleMap />;
}
