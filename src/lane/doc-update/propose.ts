/**
 * Aya (proposal): turns the Human request into the origin's doc_update_proposal_v1, saved at the
 * contract's path. Deterministic: the updates the request lists (`payload.details.updates`), else
 * one appended section per target document with the request's text.
 */
import { parseWith } from "../../core/index.js";
import { DocUpdateRequestDetailsSchema, PROPOSAL_VERSION, type DocUpdate, type DocUpdateProposal } from "./schema.js";
import { PROPOSAL_DIR, artifactPath, readDoc, saveRepoArtifact, type LaneRunContext } from "./context.js";
import { buildProposal } from "./formats.js";

/**
 * `exists` says whether a target document is in the repository: one that is not yet is proposed
 * as `create` (with a title), so a fresh repository's first request ends in an update Sho accepts.
 */
export function proposalFor(
  ctx: Pick<LaneRunContext, "entry" | "lane" | "cycleId" | "project">,
  now = new Date(),
  exists: (path: string) => boolean = () => true,
): DocUpdateProposal {
  const { entry, lane } = ctx;
  const details = parseWith(
    DocUpdateRequestDetailsSchema,
    entry.payload.details ?? {},
    `payload.details of entry ${entry.id}`,
    "invalid_request",
  );
  const summary =
    typeof entry.payload.summary === "string" && entry.payload.summary.trim() !== ""
      ? entry.payload.summary.trim()
      : details.request?.trim() || `Documentation update ${ctx.cycleId}`;
  const updates: DocUpdate[] = details.updates
    ? details.updates.map((u, i) => ({ ...u, id: u.id ?? `u${i + 1}` }))
    : (entry.target_docs.length > 0 ? entry.target_docs : [lane.state_file]).map((path, i) => {
        const section = `## Update ${ctx.cycleId} (${now.toISOString().slice(0, 10)})\n\n${(details.request ?? summary).trim().replace(/([^.!?])$/, "$1.")}`;
        const create = !exists(path);
        return {
          id: `u${i + 1}`,
          path,
          reason: create ? `requested in ${entry.id}; ${path} does not exist yet` : `requested in ${entry.id}`,
          change_type: create ? ("create" as const) : ("append" as const),
          suggested_markdown: create ? `# ${titleOf(path)}\n\n${section}` : section,
        };
      });
  return buildProposal({
    projectId: ctx.project.config.project_id,
    cycleId: ctx.cycleId,
    requestEntryId: entry.id,
    summary,
    updates,
    now,
  });
}

/** A document's title from its file name: `STATE/current_state.md` → "Current state". */
function titleOf(path: string): string {
  const name = (path.split("/").pop() ?? path)
    .replace(/\.[^.]+$/, "")
    .replace(/[_-]+/g, " ")
    .trim();
  return name === "" ? path : name[0]!.toUpperCase() + name.slice(1);
}

/** Whether the workspace holds `path` (a path that escapes it counts as there: Sho's guard refuses it). */
function inWorkspace(workspace: string, path: string): boolean {
  try {
    return readDoc(workspace, path) !== null;
  } catch {
    return true;
  }
}

export function runAya(ctx: LaneRunContext, now = new Date()): void {
  const { sprite } = ctx;
  sprite.phaseStarted("proposal");
  const proposal = proposalFor(ctx, now, (path) => inWorkspace(ctx.workspace, path));
  saveRepoArtifact(ctx, PROPOSAL_VERSION, artifactPath(PROPOSAL_DIR, ctx.cycleId, now, PROPOSAL_VERSION), proposal, {
    updates: proposal.updates.length,
  });
  sprite.phaseFinished("proposal", true);
  sprite.completed(
    "success",
    `proposal for ${ctx.cycleId}: ${proposal.updates.length} update(s) to ${[...new Set(proposal.updates.map((u) => u.target.path))].join(", ")}`,
  );
}
