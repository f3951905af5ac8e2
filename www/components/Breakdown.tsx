// A search hit's score breakdown: each path's rank, metric and contribution, the weights
// and the calibrated relevance, as the pipeline computed them.
import type { Breakdown as Parts, PathScore } from "engram";

function pathRow(name: string, path: PathScore | undefined) {
  return (
    <tr key={name}>
      <th scope="row">{name}</th>
      {path ? (
        <>
          <td>{path.rank}</td>
          <td>{path.metric.toFixed(4)}</td>
          <td>{path.weight.toFixed(2)}</td>
          <td>{path.contribution.toFixed(5)}</td>
        </>
      ) : (
        <td colSpan={4} className="muted">
          not found by this path
        </td>
      )}
    </tr>
  );
}

export default function Breakdown({ parts }: { parts: Parts }) {
  return (
    <div className="scroll" data-testid="breakdown">
      <table>
        <caption className="muted" style={{ textAlign: "left" }}>
          relevance {parts.relevance.toFixed(2)} · coverage {Math.round(parts.coverage * 100)}% · score{" "}
          {parts.score.toFixed(5)}
        </caption>
        <thead>
          <tr>
            <th scope="col">path</th>
            <th scope="col">rank</th>
            <th scope="col">metric</th>
            <th scope="col">weight</th>
            <th scope="col">contribution</th>
          </tr>
        </thead>
        <tbody>
          {pathRow("keyword", parts.keyword)}
          {pathRow("dense", parts.dense)}
          {pathRow("graph", parts.graph)}
        </tbody>
      </table>
      <p className="muted">
        fused {parts.fused.toFixed(5)} + graph boost {parts.graphBoost.toFixed(5)} × phase {parts.phaseWeight.toFixed(2)} ×
        trust {parts.trustWeight.toFixed(2)} × role {parts.roleWeight.toFixed(2)} × confidence {parts.confidence.toFixed(2)} ×
        decay {parts.decay.toFixed(3)}
      </p>
    </div>
  );
}
