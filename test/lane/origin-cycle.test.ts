/**
 * A doc_update cycle between the origin's workflows and pmagent's roles, both ways: entries in
 * the origin's shapes (Blackboard comments as its workflows write them) whose inputs are GitHub
 * Actions artifacts (served by the local GitHub stand-in, fetched through Octokit), continued by
 * pmagent's Sho, Tsugu and Gen to the applied commit and the PM snapshot; and pmagent's files read
 * by readers written from the origin's documents (./origin-reader.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseComment } from "../../src/blackboard/index.js";
import { cycleRootId, defaultConfig, loadProject } from "../../src/config/index.js";
import { Sprite } from "../../src/lattice/index.js";
import { runLaneStep, type LaneEntry, type LaneRunContext } from "../../src/lane/index.js";
import { FakeGitHub } from "../helpers/fake-github.js";
import {
  originTsuguWouldApply,
  readOriginProposal,
  readOriginReview,
  readOriginSnapshotFile,
} from "./origin-reader.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/vpm-mini");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
const REPO = "HirakuArai/vpm-mini";
const TOKEN = "ghs_vpm_mini_actions_read_0123456789";
const TOKEN_ENV = "VPM_GH_TOKEN";
const ENTRIES = JSON.parse(fixture("entries.json")) as Array<Record<string, unknown>>;

type Event = { event_type: string; payload: Record<string, unknown> };

let gh: FakeGitHub;
let proposalRun: number;
let reviewRun: number;

beforeAll(async () => {
  gh = await FakeGitHub.start({ tokens: { [TOKEN]: "tsugu-bot" } });
  gh.addRepo(REPO);
  // The origin's proposal workflow and its Sho review workflow, each leaving its JSON as an artifact.
  proposalRun = gh.addWorkflowRun(REPO, { name: "Doc Update Proposal (PM)", event: "workflow_dispatch" }).id;
  gh.addArtifact(REPO, proposalRun, "doc_update_proposal-vpm-mini", {
    "doc_update_proposal_v1.json": fixture("doc_update_proposal_v1.json"),
  });
  reviewRun = gh.addWorkflowRun(REPO, { name: "Doc Update Review (Sho)", event: "workflow_dispatch" }).id;
  gh.addArtifact(REPO, reviewRun, `doc_update_review_v1_${reviewRun}`, {
    "doc_update_review_v1.json": fixture("doc_update_review_v1.json"),
  });
});
afterAll(async () => {
  await gh.close();
});

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/** The origin's repository as pmagent finds it: STATE and a PM spec, and pmagent's config pointing at GitHub. */
function originRepository(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "pmagent-origin-")), "vpm-mini");
  mkdirSync(join(dir, "STATE"), { recursive: true });
  mkdirSync(join(dir, "docs/pm"), { recursive: true });
  writeFileSync(join(dir, "STATE/current_state.md"), fixture("current_state.md"));
  writeFileSync(join(dir, "docs/pm/pm_snapshot_v1_spec.md"), fixture("pm_snapshot_v1_spec.md"));
  writeFileSync(
    join(dir, "pmagent.config.json"),
    JSON.stringify(
      { ...defaultConfig("vpm-mini"), github: { repo: REPO, token_env: TOKEN_ENV, api_url: gh.url } },
      null,
      2,
    ),
  );
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", ".");
  git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "vpm-mini");
  return dir;
}

/** An entry as the origin's workflows post it (a fenced blackboard comment), read by pmagent's board codec. */
function originEntry(entry: Record<string, unknown>): LaneEntry {
  const decoded = parseComment(
    `<!-- blackboard:doc_update_v1 -->\n\`\`\`json\n${JSON.stringify(entry, null, 2)}\n\`\`\``,
  )!.entry;
  return {
    id: decoded.id,
    kind: decoded.kind,
    payload: decoded.payload,
    target_docs: decoded.target_docs.map((d) => (typeof d === "string" ? d : d.path)),
    ...(decoded.payload_ref !== undefined ? { payload_ref: decoded.payload_ref } : {}),
  };
}

/** Run a built-in lane sprite on `entry` in `workspace`, as the supervisor would; its events. */
async function step(
  name: string,
  role: string,
  workspace: string,
  entry: LaneEntry,
  env: NodeJS.ProcessEnv = { [TOKEN_ENV]: TOKEN },
): Promise<{ code: number; events: Event[] }> {
  const events: Event[] = [];
  const sprite = new Sprite({
    spriteId: `s-${name}`,
    workItemId: entry.id,
    workspace,
    checkpointDir: join(workspace, "..", "checkpoints"),
    write: (line) => void events.push(JSON.parse(line.slice(line.indexOf("{"))) as Event),
  });
  const project = loadProject({ cwd: workspace });
  const lane = project.config.lanes[0]!;
  const ctx: LaneRunContext = {
    sprite,
    role,
    workspace,
    project,
    lane,
    entry,
    cycleId: cycleRootId(lane, entry.id),
    branch: "doc-update/issue571",
    base: "main",
    onCycleBranch: false,
    entryFile: "",
  };
  const code = await runLaneStep(name, ctx, env);
  return { code, events };
}

const artifactOf = (events: Event[], kind: string) =>
  events.find((e) => e.event_type === "ARTIFACT" && e.payload.kind === kind)?.payload as
    { ref: string; url?: string } | undefined;
/** The run's ERROR event: its message and its error's code. */
function errorOf(events: Event[]): { message: string; code: string } | undefined {
  const e = events.find((x) => x.event_type === "ERROR")?.payload as
    { message: string; details: { code: string } } | undefined;
  return e && { message: e.message, code: e.details.code };
}

describe("a cycle the origin's workflows began, continued by pmagent's roles", () => {
  it("Sho reviews Aya's proposal fetched from Actions, Tsugu replaces the files whole, Gen writes the snapshot: each file as the origin's spec reads it", async () => {
    const dir = originRepository();
    // Aya → Sho, as the origin's Aya leaves it: payload_ref naming her artifact, no payload.
    const shoEntry = originEntry({
      ...ENTRIES[1]!,
      payload_ref: {
        type: "actions_artifact",
        workflow_run_id: proposalRun,
        artifact_name: "doc_update_proposal-vpm-mini",
      },
    });
    const sho = await step("sho", "Sho", dir, shoEntry);
    expect(errorOf(sho.events)).toBeUndefined();
    expect(sho.code).toBe(0);
    const fetchedProposal = `reports/doc_update_proposals/actions-${proposalRun}-doc_update_proposal-vpm-mini/doc_update_proposal_v1.json`;
    expect(sho.events.find((e) => e.payload.kind === "artifact_fetched")?.payload.message).toBe(
      `fetched doc_update_proposal_v1 from the artifact "doc_update_proposal-vpm-mini" of workflow run ${proposalRun} (doc_update_proposal_v1.json) into ${fetchedProposal}`,
    );
    expect(readFileSync(join(dir, fetchedProposal), "utf8")).toBe(fixture("doc_update_proposal_v1.json"));

    // Sho's review, read as the origin's spec defines it.
    const reviewRef = artifactOf(sho.events, "doc_update_review_v1")!.ref;
    expect(reviewRef).toMatch(
      /^reports\/doc_update_reviews\/\d{4}-\d\d-\d\d-vpm-mini-docupdate-review-issue571-1\/doc_update_review_v1\.json$/,
    );
    const review = JSON.parse(readFileSync(join(dir, reviewRef), "utf8")) as Record<string, unknown>;
    expect(readOriginReview(review).problems).toEqual([]);
    expect(review).toMatchObject({
      project_id: "vpm-mini",
      proposal_ref: fetchedProposal,
      overall_assessment: { risk_level: "low" },
    });
    const state = fixture("current_state.md");
    const newCurrent =
      "- Phase 2: PM Kai v1 と Layer B の Doc Update レーンを運用中。\n- Aya / Sho / Tsugu は黒板 entry（Issue #841）を拾って起動する。\n- Gen の pm_snapshot は as_of_date（JST）単位で出力する。";
    const expected = new Map([
      // edit_paragraph: the section its section_hint names, replaced; everything else kept.
      [
        "STATE/current_state.md",
        state.replace(/- Phase 2:[^\n]*\n- Aya \/ Sho \/ Tsugu のワークフロー[^\n]*/, newCurrent),
      ],
      // add: appended.
      [
        "docs/pm/pm_snapshot_v1_spec.md",
        `${fixture("pm_snapshot_v1_spec.md").trimEnd()}\n\n## 3. as_of_date ポリシー\n\nas_of_date は JST の日付（YYYY-MM-DD）とし、1 日 1 スナップショットを原則とする。\n`,
      ],
    ]);
    const origin = originTsuguWouldApply(review);
    expect(origin.refused).toBeNull();
    expect(origin.files).toEqual(expected);

    // Tsugu, on the entry the supervisor posts after Sho (his artifact referenced).
    const tsuguEntry: LaneEntry = {
      id: `${shoEntry.id}-apply`,
      kind: "doc_update_apply_request",
      payload: {
        refs: {
          artifacts: [
            {
              type: "artifact",
              kind: "doc_update_review_v1",
              ref: reviewRef,
              url: artifactOf(sho.events, "doc_update_review_v1")!.url,
            },
          ],
        },
      },
      target_docs: [],
    };
    const tsugu = await step("tsugu", "Tsugu", dir, tsuguEntry);
    expect(errorOf(tsugu.events)).toBeUndefined();
    expect(tsugu.events.map((e) => e.event_type)).toEqual([
      "PHASE_STARTED",
      "ARTIFACT",
      "ARTIFACT",
      "PHASE_FINISHED",
      "ACTION_REQUEST",
      "INFO",
      "WAITING",
    ]);
    const commit = artifactOf(tsugu.events, "commit")!.ref;
    expect(git(dir, "log", "-1", "--format=%an %s", commit)).toBe(
      "Tsugu docs(state): apply doc_update_review_v1 vpm-mini-docupdate-review-issue571-1",
    );
    for (const [path, content] of expected) expect(git(dir, "show", `${commit}:${path}`) + "\n").toBe(content);
    expect(
      git(dir, "diff", "--name-only", "main", commit)
        .split("\n")
        .filter((f) => !f.startsWith("reports/")),
    ).toEqual([...expected.keys()].sort());
    const pr = tsugu.events.find((e) => e.event_type === "ACTION_REQUEST")!.payload as {
      action: string;
      parameters: { title: string; head: string; base: string };
    };
    expect(pr).toMatchObject({
      action: "OPEN_PR",
      parameters: {
        title: "Docs: apply doc_update_review_v1 to STATE/docs (vpm-mini-docupdate-review-issue571-1)",
        head: "doc-update/issue571",
        base: "main",
      },
    });

    // Gen, on the entry after Tsugu: the origin's pm_snapshot_v1 file.
    const genEntry: LaneEntry = {
      id: `${tsuguEntry.id}-pm_snapshot`,
      kind: "pm_snapshot_request",
      payload: {
        refs: {
          artifacts: [
            { type: "artifact", kind: "doc_update_review_v1", ref: reviewRef },
            { type: "artifact", kind: "branch", ref: "doc-update/issue571" },
            { type: "artifact", kind: "commit", ref: commit },
          ],
        },
      },
      target_docs: [],
    };
    const gen = await step("gen", "Gen", dir, genEntry);
    expect(errorOf(gen.events)).toBeUndefined();
    const snapshotRef = artifactOf(gen.events, "pm_snapshot")!.ref;
    expect(snapshotRef).toMatch(/^reports\/pm_snapshots\/\d{4}-\d\d-\d\d_vpm-mini\.md$/);
    const read = readOriginSnapshotFile(readFileSync(join(dir, snapshotRef), "utf8"));
    expect(read.problems).toEqual([]);
    expect(read.snapshot).toMatchObject({
      project_id: "vpm-mini",
      goals: {
        short_term: ["短期: 黒板経由で Doc Update を 1 周させる。", "短期: Tsugu の apply を黒板から起動する。"],
      },
      gaps: ["Tsugu の黒板連携が未実装。", "Gen の pm_snapshot が黒板の done を読まない。"],
    });
    expect((read.snapshot!.current as { bullets: string[] }).bullets).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          `2 update(s) accepted and applied on branch \`doc-update/issue571\` (commit ${commit.slice(0, 12)})`,
        ),
      ]),
    );
  }, 60_000);

  it("Tsugu applies the review the origin's Sho left in Actions, named as the origin's Tsugu entry names it (review_workflow_run_id, review_artifact_name)", async () => {
    const dir = originRepository();
    const raw = ENTRIES[2]!;
    const refs = {
      ...(raw.payload as { refs: Record<string, unknown> }).refs,
      review_workflow_run_id: String(reviewRun),
      review_artifact_name: `doc_update_review_v1_${reviewRun}`,
    };
    const entry = originEntry({ ...raw, payload: { ...(raw.payload as object), refs } });
    const tsugu = await step("tsugu", "Tsugu", dir, entry);
    expect(errorOf(tsugu.events)).toBeUndefined();
    const commit = artifactOf(tsugu.events, "commit")!.ref;
    // What the origin's own Tsugu would write, file for file.
    const origin = originTsuguWouldApply(JSON.parse(fixture("doc_update_review_v1.json")));
    expect(origin.refused).toBeNull();
    expect([...origin.files.keys()]).toEqual(["STATE/current_state.md"]);
    expect(git(dir, "show", `${commit}:STATE/current_state.md`) + "\n").toBe(
      origin.files.get("STATE/current_state.md"),
    );
    // The fetched review goes onto the branch with the file it changed; the rejected update's file is untouched.
    const fetched = `reports/doc_update_reviews/actions-${reviewRun}-doc_update_review_v1_${reviewRun}/doc_update_review_v1.json`;
    expect(git(dir, "diff", "--name-only", "main", commit).split("\n")).toEqual(["STATE/current_state.md", fetched]);
    expect(git(dir, "show", `${commit}:${fetched}`) + "\n").toBe(fixture("doc_update_review_v1.json"));
  }, 60_000);
});

describe("pmagent's files, read by the origin's readers", () => {
  it("Aya's proposal for the contract's Human → Aya request", async () => {
    const dir = originRepository();
    const aya = await step("aya", "Aya", dir, originEntry(ENTRIES[0]!));
    expect(errorOf(aya.events)).toBeUndefined();
    const ref = artifactOf(aya.events, "doc_update_proposal_v1")!.ref;
    expect(ref).toMatch(
      /^reports\/doc_update_proposals\/\d{4}-\d\d-\d\d-vpm-mini-docupdate-issue571-1\/doc_update_proposal_v1\.json$/,
    );
    const proposal = JSON.parse(readFileSync(join(dir, ref), "utf8")) as Record<string, unknown>;
    const read = readOriginProposal(proposal);
    expect(read.problems).toEqual([]);
    expect(read.targets).toEqual(["STATE/current_state.md", "docs/pm/pm_snapshot_v1_spec.md"]);
    expect(proposal).toMatchObject({
      project_id: "vpm-mini",
      summary: "STATE/current_state と pm_snapshot_spec を今の運用に合わせて整えたい",
    });
  });

  it("the origin's own files pass the readers (the readers and the fixtures agree)", () => {
    expect(readOriginProposal(JSON.parse(fixture("doc_update_proposal_v1.json"))).problems).toEqual([]);
    expect(readOriginReview(JSON.parse(fixture("doc_update_review_v1.json"))).problems).toEqual([]);
    expect(readOriginSnapshotFile(fixture("pm_snapshot_2025-11-30_vpm-mini.md")).problems).toEqual([]);
    // …and a file that breaks the spec does not.
    expect(
      readOriginReview({
        ...JSON.parse(fixture("doc_update_review_v1.json")),
        overall_assessment: { summary: "s", risk_level: "none" },
      }).problems,
    ).toEqual(["overall_assessment.risk_level is not low|medium|high"]);
  });
});

describe("what pmagent refuses, and says why", () => {
  /** Tsugu on a review written at `payload.details.review_path` (roles contract §3.3.3). */
  async function tsuguOn(review: unknown, prepare: (dir: string) => void = () => undefined) {
    const dir = originRepository();
    prepare(dir);
    mkdirSync(join(dir, "reports/doc_update_reviews"), { recursive: true });
    writeFileSync(join(dir, "reports/doc_update_reviews/r.json"), JSON.stringify(review));
    const entry: LaneEntry = {
      id: "vpm-mini-apply-1",
      kind: "doc_update_apply_request",
      payload: { details: { review_path: "reports/doc_update_reviews/r.json" } },
      target_docs: [],
    };
    const run = await step("tsugu", "Tsugu", dir, entry);
    return { ...run, dir, error: errorOf(run.events) };
  }
  const base = () =>
    JSON.parse(fixture("doc_update_review_v1.json")) as Record<string, unknown> & {
      target_files: Array<Record<string, unknown>>;
    };

  it.each([
    [
      "a file of medium risk",
      (r: ReturnType<typeof base>) => ({ ...r, target_files: [{ ...r.target_files[0]!, risk: "medium" }] }),
      "review_not_applicable",
      'STATE/current_state.md has risk "medium", not "low"',
    ],
    [
      "no review_mode",
      (r: ReturnType<typeof base>) => ({ ...r, review_mode: undefined }),
      "review_not_applicable",
      'review_mode is missing, not "auto_accept_v1"',
    ],
    [
      "the same file twice",
      (r: ReturnType<typeof base>) => ({ ...r, target_files: [r.target_files[0]!, r.target_files[0]!] }),
      "review_not_applicable",
      "STATE/current_state.md has more than one target_files entry",
    ],
    [
      "a path outside the allowed ones",
      (r: ReturnType<typeof base>) => ({
        ...r,
        target_files: [{ ...r.target_files[0]!, target: { path: "src/app.ts" } }],
      }),
      "update_refused",
      'path "src/app.ts" is outside the allowed paths (STATE/, docs/, reports/)',
    ],
    [
      "a truncating final_content",
      (r: ReturnType<typeof base>) => ({
        ...r,
        target_files: [{ ...r.target_files[0]!, final_content: "# vpm-mini\n\nShort." }],
      }),
      "update_refused",
      "would shrink STATE/current_state.md from 24 to 3 lines",
    ],
    [
      "no schema_version",
      () => ({ project_id: "vpm-mini" }),
      "invalid_artifact",
      'is not a doc_update_review_v1: it has no schema_version (expected "doc_update_review_v1")',
    ],
  ])("a review with %s", async (_what, change, code, message) => {
    const { code: exit, error, dir } = await tsuguOn(change(base()));
    expect(exit).toBe(1);
    expect(error).toMatchObject({ code });
    expect(error!.message).toContain(message);
    expect(git(dir, "status", "--porcelain", "--", "STATE")).toBe(""); // nothing written
  });

  it("pmagent's earlier review format (accepted updates, no final_content) is still applied, from the document as it is", async () => {
    const appended = "### 1.3 Notes\n\nThe earlier review format still applies.";
    const legacy = {
      version: "doc_update_review_v1",
      cycle_id: "old-1",
      proposal_summary: "Note the earlier format",
      created_at: "2026-01-15T10:31:00Z",
      decisions: [
        {
          update_id: "u1",
          path: "STATE/current_state.md",
          decision: "accept",
          reasons: [],
          lines_before: 24,
          lines_after: 28,
        },
      ],
      accepted: [
        { id: "u1", path: "STATE/current_state.md", reason: "r", change_type: "append", suggested_markdown: appended },
      ],
    };
    const { code, error, events, dir } = await tsuguOn(legacy);
    expect(error).toBeUndefined();
    expect(code).toBe(0);
    const commit = artifactOf(events, "commit")!.ref;
    expect(git(dir, "show", `${commit}:STATE/current_state.md`) + "\n").toBe(
      `${fixture("current_state.md").trimEnd()}\n\n${appended}\n`,
    );
  });

  it("a target file reached through a symbolic link", async () => {
    const outside = mkdtempSync(join(tmpdir(), "pmagent-outside-"));
    const review = {
      ...base(),
      target_files: [
        {
          target: { path: "docs/linked/notes.md" },
          change_type: "replace_whole_file",
          final_content: "# Notes\n\nText.\n",
          risk: "low",
        },
      ],
    };
    const { error } = await tsuguOn(review, (dir) => symlinkSync(outside, join(dir, "docs/linked")));
    expect(error).toMatchObject({ code: "path_is_link" });
    expect(error!.message).toBe(
      'document path "docs/linked/notes.md" goes through the symbolic link docs/linked: links are not followed; replace it with the file itself',
    );
  });

  it.each([
    [
      "no token",
      {},
      { payload_ref: { type: "actions_artifact", workflow_run_id: 1, artifact_name: "doc_update_proposal-vpm-mini" } },
      "github_token_missing",
      `entry vpm-mini-docupdate-review-issue571-1 names the artifact "doc_update_proposal-vpm-mini" of workflow run 1 in ${REPO}, and ${TOKEN_ENV} is not set: export a token that can read the repository's Actions artifacts as ${TOKEN_ENV} (config github.token_env names the variable)`,
    ],
    [
      "no run id",
      { [TOKEN_ENV]: TOKEN },
      { payload_ref: { type: "actions_artifact", artifact_name: "x" } },
      "invalid_payload_ref",
      "payload_ref names a GitHub Actions artifact without a numeric workflow_run_id",
    ],
    [
      "an artifact the run does not have",
      { [TOKEN_ENV]: TOKEN },
      {
        payload_ref: { type: "actions_artifact", workflow_run_id: -1, artifact_name: "doc_update_proposal-hakone-e2" },
      },
      "artifact_not_found",
      "the run has no artifact of that name (it has doc_update_proposal-vpm-mini)",
    ],
  ])("an entry naming an Actions artifact, with %s", async (_what, env, change, code, message) => {
    const dir = originRepository();
    const ref = change.payload_ref as Record<string, unknown>;
    const entry = originEntry({
      ...ENTRIES[1]!,
      payload_ref: ref.workflow_run_id === -1 ? { ...ref, workflow_run_id: proposalRun } : ref,
    });
    const sho = await step("sho", "Sho", dir, entry, env);
    expect(sho.code).toBe(1);
    expect(errorOf(sho.events)).toMatchObject({ code });
    expect(errorOf(sho.events)!.message).toContain(message);
    expect(JSON.stringify(sho.events)).not.toContain(TOKEN);
  });
});
