/**
 * Hana (router): routes the finished cycle back to Human. She does not judge: she passes on the
 * snapshot and the pull request, and the lane posts her summary to Human.
 */
import { findArtifact, type LaneRunContext } from "./context.js";

export function runHana(ctx: LaneRunContext): void {
  const { sprite, entry } = ctx;
  const snapshot = findArtifact(entry, "pm_snapshot");
  const pr = findArtifact(entry, "pull_request");
  sprite.info(`routing cycle ${ctx.cycleId} back to Human`, { kind: "route" });
  if (snapshot?.ref) sprite.artifact("pm_snapshot", { ref: snapshot.ref });
  if (pr?.ref) sprite.artifact("pull_request", { ref: pr.ref });
  const parts = [pr?.ref ? `pull request #${pr.ref} to review` : "no pull request", snapshot?.ref ? `PM snapshot ${snapshot.ref}` : "no PM snapshot"];
  sprite.completed("success", `doc_update cycle ${ctx.cycleId} is done: ${parts.join(", ")}`);
}
