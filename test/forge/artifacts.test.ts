import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadActionsArtifact, gitHubClient } from "../../src/forge/index.js";
import { FakeGitHub } from "../helpers/fake-github.js";

const TOKEN = "ghs_artifacts_test_token_0123456789";
const REPO = "HirakuArai/vpm-mini";

describe("GitHub Actions artifacts through Octokit", () => {
  let gh: FakeGitHub;
  let runId: number;
  const client = () =>
    gitHubClient({ repo: REPO, tokenEnv: "GH_TEST_TOKEN", apiUrl: gh.url }, { GH_TEST_TOKEN: TOKEN });
  const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

  beforeAll(async () => {
    gh = await FakeGitHub.start({ tokens: { [TOKEN]: "pmagent-bot" } });
    gh.addRepo(REPO);
    runId = gh.addWorkflowRun(REPO, { name: "Doc Update Review (Sho)", event: "workflow_dispatch" }).id;
    gh.addArtifact(REPO, runId, `doc_update_review_v1_${runId}`, {
      "doc_update_review_v1.json": '{"schema_version":"doc_update_review_v1"}',
      "logs/sho.txt": "ok",
    });
    gh.addArtifact(REPO, runId, "old_snapshot", { "a.json": "{}" }, { expired: true });
  });
  afterAll(async () => {
    await gh.close();
  });

  it("lists the run's artifacts by name, follows the download's 302 to the zip, and returns its files", async () => {
    const before = gh.requests.length;
    const files = await downloadActionsArtifact(
      client(),
      { runId, name: `doc_update_review_v1_${runId}` },
      "GH_TEST_TOKEN",
    );
    expect([...files.keys()].sort()).toEqual(["doc_update_review_v1.json", "logs/sho.txt"]);
    expect(JSON.parse(text(files.get("doc_update_review_v1.json")))).toEqual({
      schema_version: "doc_update_review_v1",
    });
    const calls = gh.requests.slice(before).map((r) => [r.method, r.path.replace(/\d+/g, "N"), r.status]);
    expect(calls).toEqual([
      ["GET", "/repos/HirakuArai/vpm-mini/actions/runs/N/artifacts", 200],
      ["GET", "/repos/HirakuArai/vpm-mini/actions/artifacts/N/zip", 302],
      ["GET", "/_blobs/artifact-N.zip", 200],
    ]);
    expect(gh.requests[before]!.query).toMatchObject({ per_page: "100" });
  });

  it.each([
    [
      () => ({ runId, name: "doc_update_proposal-vpm-mini" }),
      "artifact_not_found",
      `the run has no artifact of that name`,
    ],
    [() => ({ runId, name: "old_snapshot" }), "artifact_expired", "it expired on"],
    [() => ({ runId: 999_999, name: "x" }), "github_not_found", "GitHub answered 404 Not Found"],
  ])("refuses what it cannot fetch, saying why (%#)", async (ref, code, message) => {
    const err = await downloadActionsArtifact(client(), ref(), "GH_TEST_TOKEN").catch(
      (e: unknown) => e as Error & { code: string },
    );
    expect(err).toMatchObject({ code });
    expect((err as Error).message).toContain(message);
  });

  it("names the variable whose token GitHub refused, without the token", async () => {
    const bad = gitHubClient(
      { repo: REPO, tokenEnv: "GH_TEST_TOKEN", apiUrl: gh.url },
      { GH_TEST_TOKEN: "ghs_wrong_token_000000000000" },
    );
    const err = (await downloadActionsArtifact(bad, { runId, name: "x" }, "GH_TEST_TOKEN").catch(
      (e: unknown) => e,
    )) as Error & { code: string };
    expect(err.code).toBe("github_unauthorized");
    expect(err.message).toContain("GH_TEST_TOKEN");
    expect(err.message).not.toContain("ghs_wrong_token");
  });
});
