// Small pieces every page uses: an error said to assistive technology, and the options of
// a select over engram's names, worded for people.
import { words } from "@/lib/client";

/** The error, if any, announced as an alert. */
export function ErrorNote({ error }: { error: string | null }) {
  return error ? (
    <p className="error" role="alert">
      {error}
    </p>
  ) : null;
}

/** An `<option>` per name, its label the name in words. */
export function Options({ names }: { names: readonly string[] }) {
  return (
    <>
      {names.map((name) => (
        <option key={name} value={name}>
          {words(name)}
        </option>
      ))}
    </>
  );
}
