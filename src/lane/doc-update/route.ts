/**
 * Hana (router, roles contract §3.6 and Hana's role spec v1): she picks `hana_task` (from the
 * owner), `pm_snapshot_done` (from Gen) and `hana_analysis_result` (from Kai) and sends each on
 * where her role's `routes` say — a task by its `payload.target` (Aya: a doc_update_proposal_request,
 * Kai: an analysis request), a snapshot or an analysis to Human as an index of where things are.
 * She does not judge or rewrite: her summary is the owner's own for a task, and the supervisor
 * passes the entry's `payload.details` on as they came. A task whose target no route takes fails
 * her run (and so reaches a human as a doc_update_error) instead of going somewhere guessed.
 */
import { RefusedError, UsageError } from "../../core/index.js";
import { HANA_KINDS, findRole, nextStep } from "../../config/index.js";
import { artifactRefs, cycleRef, findArtifact, type LaneRunContext } from "./context.js";

const text = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);

/** Pass every artifact the entry references on, so that the next entry's refs index them. */
function passArtifactsOn(ctx: LaneRunContext): void {
  for (const a of artifactRefs(ctx.entry))
    if (a.ref !== null) ctx.sprite.artifact(a.kind, { ref: a.ref, ...(a.url !== null ? { url: a.url } : {}) });
}

function routeTask(ctx: LaneRunContext): void {
  const { entry, sprite } = ctx;
  const { role } = findRole(ctx.project.config, ctx.role);
  const targets = (role.routes ?? []).filter((r) => r.on === entry.kind).map((r) => r.target ?? "(any)");
  const target = text(entry.payload.target);
  if (target === undefined) {
    throw new UsageError(
      "route_target_missing",
      `${entry.kind} ${entry.id} has no payload.target: ${ctx.role} routes a task only where it says (one of ${targets.join(", ") || "no route configured"})`,
    );
  }
  const step = nextStep(role, entry);
  if (!step)
    throw new RefusedError(
      "route_unknown",
      `${entry.kind} ${entry.id} names target "${target}", and no route of ${ctx.role}'s takes it (routes: ${targets.join(", ") || "none"})`,
    );
  sprite.info(`routing ${entry.kind} ${entry.id} to ${step.to} as ${step.kind}`, { kind: "route" });
  passArtifactsOn(ctx);
  sprite.completed("success", text(entry.payload.summary) ?? `${entry.kind} ${entry.id} routed to ${step.to}`);
}

function routeSnapshot(ctx: LaneRunContext): void {
  const { sprite, entry } = ctx;
  const snapshot = findArtifact(entry, "pm_snapshot");
  const pr = findArtifact(entry, "pull_request")?.ref ?? cycleRef(entry, "pull_request");
  sprite.info(`routing cycle ${ctx.cycleId} back to Human`, { kind: "route" });
  passArtifactsOn(ctx);
  const parts = [
    pr ? `pull request #${pr} to review` : "no pull request",
    snapshot?.ref ? `PM snapshot ${snapshot.ref}` : "no PM snapshot",
  ];
  sprite.completed("success", `doc_update cycle ${ctx.cycleId} is done: ${parts.join(", ")}`);
}

function routeAnalysis(ctx: LaneRunContext): void {
  const { sprite, entry } = ctx;
  sprite.info(`routing the analysis result ${entry.id} to Human`, { kind: "route" });
  passArtifactsOn(ctx);
  const summary = text(entry.payload.summary);
  sprite.completed("success", `analysis result ${entry.id}${summary ? `: ${summary}` : ""}`);
}

export function runHana(ctx: LaneRunContext): void {
  switch (ctx.entry.kind) {
    case HANA_KINDS.task:
      return routeTask(ctx);
    case HANA_KINDS.analysisResult:
      return routeAnalysis(ctx);
    case HANA_KINDS.snapshotDone:
      return routeSnapshot(ctx);
    default:
      throw new UsageError(
        "unknown_kind",
        `${ctx.role} does not handle entries of kind ${ctx.entry.kind} (${ctx.entry.id}): she picks ${Object.values(HANA_KINDS).join(", ")}`,
      );
  }
}
