/**
 * What a lane sprite knows about its run: its entry (PMAGENT_ENTRY_FILE), its workspace (a clone
 * of the project repository), the project's lane config, and the artifacts the previous role left.
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { NotFoundError, UsageError, confinePath, parseJsonText, writeFileAtomic } from "../../core/index.js";
import { cycleRootId, findRole, loadProject, type LaneConfig, type Project } from "../../config/index.js";
import { Sprite } from "../../lattice/index.js";
import { branchSlug } from "../../forge/index.js";
import { checkoutBranchFrom, cycleBranch, git } from "./git.js";

/** The parts of a blackboard entry a sprite reads. */
export interface LaneEntry {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  target_docs: string[];
  /** The origin's reference to the entry's input (core spec §6.1): a path, or a GitHub Actions artifact. */
  payload_ref?: unknown;
}

/** An artifact reference the supervisor put in `payload.refs` when it posted this entry. */
export interface ArtifactRef {
  kind: string;
  ref: string | null;
  url: string | null;
}

export interface LaneRunContext {
  sprite: Sprite;
  role: string;
  workspace: string;
  project: Project;
  lane: LaneConfig;
  entry: LaneEntry;
  /** Id of the cycle's root request (the entry id without the lane's suffixes). */
  cycleId: string;
  /** The cycle's branch: the supervisor's (PMAGENT_CYCLE_BRANCH), else the lane's own name for it. */
  branch: string;
  /** The cycle's pull request base (PMAGENT_CYCLE_BASE), when the supervisor put the run on the cycle's branch. */
  base: string | undefined;
  /**
   * True when the supervisor started the workspace on the cycle's branch: the previous roles' work
   * is here already, and what this run leaves is committed onto the branch when it succeeds.
   */
  onCycleBranch: boolean;
  /** The file the entry was read from. */
  entryFile: string;
  /** Artifacts fetched from GitHub Actions for this run: kind → repository-relative path in the workspace. */
  fetched?: Map<string, string>;
}

export function laneContext(
  env: NodeJS.ProcessEnv = process.env,
  options: { entryFile?: string } = {},
): LaneRunContext {
  const role = env.LATTICE_ROLE;
  const workspace = env.LATTICE_WORKSPACE;
  const entryFile = options.entryFile ?? env.PMAGENT_ENTRY_FILE;
  if (!role || !workspace || !entryFile) {
    throw new UsageError(
      "not_in_a_run",
      "a lane sprite runs under the supervisor (pmagent worker or pmagent run --entry): LATTICE_ROLE, LATTICE_WORKSPACE and PMAGENT_ENTRY_FILE are not all set",
    );
  }
  // The workspace is a clone of the project: its config (or the project's, further up) applies.
  const project = loadProject({ cwd: workspace });
  const { lane } = findRole(project.config, role);
  const raw = parseJsonText(readFileSync(entryFile, "utf8"), entryFile) as Partial<LaneEntry>;
  if (typeof raw.id !== "string" || typeof raw.kind !== "string")
    throw new UsageError("invalid_entry", `${entryFile} is not a blackboard entry (no id or kind)`);
  const entry: LaneEntry = {
    id: raw.id,
    kind: raw.kind,
    payload: raw.payload ?? {},
    target_docs: raw.target_docs ?? [],
    ...(raw.payload_ref !== undefined ? { payload_ref: raw.payload_ref } : {}),
  };
  const cycleId = cycleRootId(lane, entry.id);
  const onCycleBranch = Boolean(env.PMAGENT_CYCLE_BRANCH);
  return {
    sprite: new Sprite({ env }),
    role,
    workspace,
    project,
    lane,
    entry,
    cycleId,
    branch: env.PMAGENT_CYCLE_BRANCH || cycleBranch(cycleId),
    base: env.PMAGENT_CYCLE_BASE || undefined,
    onCycleBranch,
    entryFile,
  };
}

/**
 * Artifact references of the entry, in order: from `payload.refs.artifacts` (the object form of
 * the roles contract), or from `payload.refs` itself (the list form posted before it).
 */
export function artifactRefs(entry: LaneEntry): ArtifactRef[] {
  const raw = entry.payload.refs;
  const list = Array.isArray(raw)
    ? raw
    : raw !== null && typeof raw === "object" && Array.isArray((raw as { artifacts?: unknown }).artifacts)
      ? (raw as { artifacts: unknown[] }).artifacts
      : [];
  const refs = list as Array<Record<string, unknown>>;
  return refs
    .filter((r) => r && r.type === "artifact" && typeof r.kind === "string")
    .map((r) => ({
      kind: r.kind as string,
      ref: typeof r.ref === "string" ? r.ref : null,
      url: typeof r.url === "string" ? r.url : null,
    }));
}

export function findArtifact(entry: LaneEntry, kind: string): ArtifactRef | undefined {
  return artifactRefs(entry).find((a) => a.kind === kind);
}

/**
 * What the supervisor put in `payload.refs` about the cycle (its branch, the commit the role before
 * handed on, its pull request's number), or null: how a lane sprite learns of a pull request the
 * supervisor opened, when the role before (an agent, say) reported none itself.
 */
export function cycleRef(entry: LaneEntry, key: "branch" | "commit" | "pull_request"): string | null {
  const refs = entry.payload.refs;
  const value =
    refs !== null && typeof refs === "object" && !Array.isArray(refs)
      ? (refs as Record<string, unknown>)[key]
      : undefined;
  return typeof value === "string" && value !== "" ? value : null;
}

/** Where the origin's entries name an artifact by its repository path (roles contract §3.2.3, §3.3.3). */
const DETAIL_PATH_KEYS: Record<string, string> = {
  doc_update_proposal_v1: "proposal_path",
  doc_update_review_v1: "review_path",
};

/**
 * Read the JSON artifact of `kind` the previous role left, as it is (the caller validates it):
 * one fetched from GitHub Actions for this run; else pmagent's reference — a repository-relative
 * one (the contract's form) read from the cycle's branch, fetched from the repository the
 * reference's `url` names (the previous role's workspace) and checked out here, an absolute one
 * (entries posted before) read where it is; else the origin's `payload.details.proposal_path` /
 * `review_path`, read in the workspace.
 */
export function readArtifactJson(
  ctx: Pick<LaneRunContext, "entry" | "workspace" | "branch" | "onCycleBranch" | "fetched">,
  kind: string,
): { value: unknown; path: string } {
  const { entry, workspace } = ctx;
  const fetched = ctx.fetched?.get(kind);
  const artifact = findArtifact(entry, kind);
  const details = entry.payload.details;
  const detailPath =
    details !== null && typeof details === "object" && DETAIL_PATH_KEYS[kind]
      ? (details as Record<string, unknown>)[DETAIL_PATH_KEYS[kind]!]
      : undefined;
  const ref =
    fetched ?? artifact?.ref ?? (typeof detailPath === "string" && detailPath !== "" ? detailPath : undefined);
  if (!ref)
    throw new NotFoundError(
      "artifact_missing",
      `entry ${entry.id} references no ${kind} artifact (no payload.refs artifact, payload.details.${DETAIL_PATH_KEYS[kind] ?? "path"} or payload_ref naming a GitHub Actions artifact): the previous role did not produce one`,
    );
  let file = ref;
  if (!isAbsolute(ref)) {
    // On the cycle's branch, the previous roles' commits are here already.
    if (fetched === undefined && !ctx.onCycleBranch && artifact?.url?.startsWith("file:")) {
      const repo = fileURLToPath(artifact.url);
      if (resolve(repo) !== resolve(workspace)) checkoutBranchFrom(workspace, repo, ctx.branch);
    }
    file = confinePath(workspace, ref, `${kind} artifact path`);
  }
  if (!existsSync(file))
    throw new NotFoundError("artifact_missing", `the ${kind} artifact of entry ${entry.id} is gone (${ref})`);
  return { value: parseJsonText(readFileSync(file, "utf8"), ref), path: ref };
}

/**
 * Save a JSON artifact other roles read in the repository at `rel` (the contract's path), committed
 * on the cycle's branch of the workspace, and report it by that repository-relative path, with the
 * workspace (where the branch can be fetched from) as its url.
 */
export function saveRepoArtifact(
  ctx: LaneRunContext,
  kind: string,
  rel: string,
  value: unknown,
  metadata: Record<string, unknown> = {},
): string {
  const { workspace, branch } = ctx;
  if (git(workspace, ["rev-parse", "--abbrev-ref", "HEAD"]) !== branch)
    git(workspace, ["checkout", "--quiet", "-B", branch]);
  writeFileAtomic(confinePath(workspace, rel, `${kind} artifact path`), `${JSON.stringify(value, null, 2)}\n`);
  git(workspace, ["add", "--", rel]);
  git(workspace, [
    "-c",
    `user.name=${ctx.role}`,
    "-c",
    `user.email=${ctx.role.toLowerCase()}@pmagent.invalid`,
    "commit",
    "--quiet",
    "-m",
    `reports: ${kind} of ${ctx.cycleId}`,
  ]);
  ctx.sprite.artifact(kind, {
    ref: rel,
    url: pathToFileURL(workspace).href,
    metadata: { ...metadata, branch, commit: git(workspace, ["rev-parse", "HEAD"]) },
  });
  return rel;
}

/**
 * The contract's path of a cycle's artifact (roles contract §3.2.3:
 * `reports/doc_update_proposals/.../doc_update_proposal_v1.json`): `<dir>/<date>-<cycle>/<kind>.json`,
 * the file named as in the origin's Actions artifacts.
 */
export function artifactPath(dir: string, cycleId: string, now: Date, kind: string): string {
  return `${dir}/${now.toISOString().slice(0, 10)}-${branchSlug(cycleId)}/${kind}.json`;
}

/** Where Aya's proposals and Sho's reviews are kept in the repository (roles contract §3.2.3, review spec §3.1). */
export const PROPOSAL_DIR = "reports/doc_update_proposals";
export const REVIEW_DIR = "reports/doc_update_reviews";

/** Current text of a repository file in the workspace, or null when it does not exist. */
export function readDoc(workspace: string, path: string): string | null {
  const full = confinePath(workspace, path, "document path");
  return existsSync(full) ? readFileSync(full, "utf8") : null;
}

/** What a sprite resumed after its blocking OPEN_PR expects: the supervisor's pull request result. */
export const PULL_REQUEST_INPUTS = { number: "integer", url: "string", head: "string", base: "string" } as const;

/** The outcome a resumed sprite was handed for its OPEN_PR: the pull request, or why it failed. */
export function pullRequestOutcome(
  inputs: Record<string, unknown>,
  context: Record<string, unknown>,
): { number: number; url: string | null } | { failed: string } {
  const error = context.error as { message?: string } | undefined;
  if (error) return { failed: error.message ?? "unknown error" };
  return { number: inputs.number as number, url: typeof inputs.url === "string" ? inputs.url : null };
}
