/**
 * GitHub Actions artifacts (the origin's workflows hand their JSON files on as artifacts, and their
 * blackboard entries name them by run id and artifact name): listed with Octokit's
 * `actions.listWorkflowRunArtifacts`, downloaded with `actions.downloadArtifact` (GitHub answers
 * 302 to a short-lived URL serving the zip, which fetch follows), and unzipped with fflate.
 */
import { unzipSync } from "fflate";
import { NotFoundError, RefusedError, UnavailableError } from "../core/index.js";
import { callGitHub, type GitHubClient } from "./github.js";

export interface ActionsArtifactRef {
  /** The workflow run that uploaded the artifact. */
  runId: number;
  /** The artifact's name (upload-artifact's `name`). */
  name: string;
}

/** Largest artifact pmagent downloads (the lane's JSON files are a few kilobytes). */
export const MAX_ARTIFACT_BYTES = 50 * 1024 * 1024;

/** The files of an Actions artifact, by their path inside the zip. */
export async function downloadActionsArtifact(
  client: GitHubClient,
  ref: ActionsArtifactRef,
  tokenEnv: string,
): Promise<Map<string, Uint8Array>> {
  const { octokit, owner, repo } = client;
  const what = `fetch the artifact "${ref.name}" of workflow run ${ref.runId} in ${owner}/${repo}`;
  const listed = await callGitHub(`list the artifacts of workflow run ${ref.runId} in ${owner}/${repo}`, tokenEnv, () =>
    // All of them (not filtered by name): when the name is not there, the message lists what is.
    octokit.paginate(octokit.rest.actions.listWorkflowRunArtifacts, { owner, repo, run_id: ref.runId, per_page: 100 }),
  );
  const found = listed.filter((a) => a.name === ref.name);
  if (found.length === 0) {
    const names = listed.map((a) => a.name);
    throw new NotFoundError(
      "artifact_not_found",
      `cannot ${what}: the run has no artifact of that name${names.length > 0 ? ` (it has ${names.join(", ")})` : ""}; check the entry's artifact name and run id`,
    );
  }
  // The newest, when the run uploaded the name more than once (re-runs).
  const artifact = found.sort((a, b) => String(b.created_at ?? "").localeCompare(String(a.created_at ?? "")))[0]!;
  if (artifact.expired)
    throw new RefusedError(
      "artifact_expired",
      `cannot ${what}: it expired${artifact.expires_at ? ` on ${artifact.expires_at}` : ""} (GitHub keeps artifacts for the retention period only); re-run the workflow that produced it`,
    );
  if (artifact.size_in_bytes > MAX_ARTIFACT_BYTES)
    throw new RefusedError(
      "artifact_too_large",
      `cannot ${what}: it is ${artifact.size_in_bytes} bytes, over pmagent's limit of ${MAX_ARTIFACT_BYTES}`,
    );
  const response = await callGitHub(what, tokenEnv, () =>
    octokit.rest.actions.downloadArtifact({ owner, repo, artifact_id: artifact.id, archive_format: "zip" }),
  );
  const data = response.data as unknown;
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data instanceof Uint8Array ? data : undefined;
  if (!bytes)
    throw new UnavailableError("artifact_unreadable", `cannot ${what}: GitHub's answer was not a zip archive`);
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes);
  } catch (err) {
    throw new UnavailableError(
      "artifact_unreadable",
      `cannot ${what}: the download is not a readable zip archive (${(err as Error).message})`,
    );
  }
  return new Map(Object.entries(files).filter(([path]) => !path.endsWith("/")));
}
