/**
 * Artifacts the origin's workflows left in GitHub Actions: an entry names one by `payload_ref`
 * (`{type: "actions_artifact", workflow_run_id, artifact_name}`, as the origin's Sho writes it) or
 * by `payload.refs.<proposal|review>_workflow_run_id` and `…_artifact_name` (as its Tsugu and Gen
 * entries do). Before a role reads its input, the artifact is downloaded through the project's
 * GitHub settings (`github.repo`, `github.token_env`, `github.api_url`) and its JSON file saved in
 * the workspace, where the role reads it like any other.
 */
import { existsSync } from "node:fs";
import { NotFoundError, UsageError, confinePath, writeFileAtomic } from "../../core/index.js";
import { branchSlug, downloadActionsArtifact, gitHubClient, type ActionsArtifactRef } from "../../forge/index.js";
import { PROPOSAL_DIR, REVIEW_DIR, type LaneEntry, type LaneRunContext } from "./context.js";
import { PROPOSAL_VERSION, REVIEW_VERSION } from "./schema.js";

const PREFIX: Record<string, string> = { [PROPOSAL_VERSION]: "proposal", [REVIEW_VERSION]: "review" };
const DIR: Record<string, string> = { [PROPOSAL_VERSION]: PROPOSAL_DIR, [REVIEW_VERSION]: REVIEW_DIR };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function runIdOf(v: unknown): number | undefined {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The GitHub Actions artifact holding the entry's `kind` input, or null when it names none. */
export function actionsArtifactRef(entry: LaneEntry, kind: string): ActionsArtifactRef | null {
  const ref = entry.payload_ref;
  if (
    isObject(ref) &&
    (ref.type === "actions_artifact" || ref.workflow_run_id !== undefined || ref.artifact_name !== undefined)
  ) {
    const runId = runIdOf(ref.workflow_run_id);
    const name = typeof ref.artifact_name === "string" ? ref.artifact_name.trim() : "";
    if (runId === undefined || name === "") {
      throw new UsageError(
        "invalid_payload_ref",
        `entry ${entry.id}'s payload_ref names a GitHub Actions artifact without ${runId === undefined ? "a numeric workflow_run_id" : "an artifact_name"}: give both (e.g. {"type": "actions_artifact", "workflow_run_id": 19793359086, "artifact_name": "${kind}_19793359086"})`,
      );
    }
    return { runId, name };
  }
  const prefix = PREFIX[kind];
  const refs = entry.payload.refs;
  if (
    prefix === undefined ||
    !isObject(refs) ||
    refs[`${prefix}_workflow_run_id`] === undefined ||
    refs[`${prefix}_workflow_run_id`] === ""
  )
    return null;
  const runId = runIdOf(refs[`${prefix}_workflow_run_id`]);
  if (runId === undefined)
    throw new UsageError(
      "invalid_payload_ref",
      `entry ${entry.id}'s payload.refs.${prefix}_workflow_run_id is not a workflow run id: ${JSON.stringify(refs[`${prefix}_workflow_run_id`])}`,
    );
  const named = refs[`${prefix}_artifact_name`];
  // The origin's Tsugu defaults the review artifact's name the same way.
  return { runId, name: typeof named === "string" && named.trim() !== "" ? named.trim() : kind };
}

/** The JSON file of the artifact that holds `kind`: `<kind>.json` (anywhere in it), else its one JSON file. */
function pickFile(files: Map<string, Uint8Array>, kind: string, what: string): [string, Uint8Array] {
  const json = [...files].filter(([p]) => p.endsWith(".json"));
  const named = json.filter(([p]) => p === `${kind}.json` || p.endsWith(`/${kind}.json`));
  const pick = named.length > 0 ? named : json;
  if (pick.length === 1) return pick[0]!;
  if (pick.length === 0)
    throw new NotFoundError(
      "artifact_missing",
      `${what} holds no JSON file (files: ${[...files.keys()].join(", ") || "none"})`,
    );
  throw new UsageError(
    "artifact_ambiguous",
    `${what} holds several candidate files (${pick.map(([p]) => p).join(", ")}): name the file ${kind}.json`,
  );
}

/**
 * Download the Actions artifact the entry names for `kind` (if any) into the workspace, under the
 * contract's directory, and record it on the context for `readArtifactJson`. Kept across a resume:
 * a file already there is not fetched again.
 */
export async function fetchActionsArtifact(
  ctx: LaneRunContext,
  kind: string,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  const ref = actionsArtifactRef(ctx.entry, kind);
  if (ref === null) return null;
  const dir = DIR[kind] ?? "reports";
  const rel = `${dir}/actions-${ref.runId}-${branchSlug(ref.name)}/${kind}.json`;
  const file = confinePath(ctx.workspace, rel, `${kind} artifact path`);
  ctx.fetched ??= new Map();
  if (!existsSync(file)) {
    const gh = ctx.project.config.github;
    const tokenEnv = gh?.token_env ?? "GITHUB_TOKEN";
    const what = `the artifact "${ref.name}" of workflow run ${ref.runId}`;
    if (!gh?.repo)
      throw new UsageError(
        "github_repo_missing",
        `entry ${ctx.entry.id} names ${what}, and the project has no github.repo: set github.repo (OWNER/NAME) in pmagent.config.json to fetch it`,
      );
    if (!env[tokenEnv])
      throw new UsageError(
        "github_token_missing",
        `entry ${ctx.entry.id} names ${what} in ${gh.repo}, and ${tokenEnv} is not set: export a token that can read the repository's Actions artifacts as ${tokenEnv} (config github.token_env names the variable)`,
      );
    const client = gitHubClient({ repo: gh.repo, tokenEnv, apiUrl: gh.api_url }, env);
    const files = await downloadActionsArtifact(client, ref, tokenEnv);
    const [inside, bytes] = pickFile(files, kind, `${what} in ${gh.repo}`);
    writeFileAtomic(file, Buffer.from(bytes));
    ctx.sprite.info(`fetched ${kind} from ${what} (${inside}) into ${rel}`, { kind: "artifact_fetched" });
  }
  ctx.fetched.set(kind, rel);
  return rel;
}
