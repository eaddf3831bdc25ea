/**
 * A person merging or closing a pull request of the local forge (CLI, API, MCP, console): only
 * the config's humans may, as the actor their authentication names; the merge commit says who.
 */
import { RefusedError } from "../core/index.js";
import type { LocalForge, LocalPullRequest } from "./forge.js";

export type PullRequestDecision = "merge" | "close";

export interface DecidedPullRequest {
  pull: LocalPullRequest;
  /** merge: the base branch's new head. */
  sha?: string;
}

export async function decidePullRequest(
  forge: LocalForge,
  humans: readonly string[],
  actor: string,
  number: number,
  decision: PullRequestDecision,
): Promise<DecidedPullRequest> {
  if (!humans.includes(actor)) {
    throw new RefusedError(
      "permission_refused",
      `${actor} may not ${decision} pull request #${number}: only a human (${humans.join(", ")}) may`,
      { actor, number },
    );
  }
  if (decision === "close") return { pull: await forge.closePullRequest(number) };
  const before = await forge.get(number);
  const { sha } = await forge.mergePullRequest(
    number,
    `Merge pull request #${number} from ${before.head}\n\n${before.title}\n\nMerged-by: ${actor}`,
  );
  return { pull: await forge.get(number), sha };
}
