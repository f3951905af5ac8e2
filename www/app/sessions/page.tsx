import SessionReview from "@/components/SessionReview";

export default function SessionsPage() {
  return <SessionReview />;
}
