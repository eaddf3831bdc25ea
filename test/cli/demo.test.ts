import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { SqliteStore } from "../../src/store/index.js";
import { RunStore } from "../../src/lattice/index.js";
import { LocalForge } from "../../src/forge/index.js";
import { DocUpdateReviewSchema } from "../../src/lane/index.js";
import { runCli } from "../helpers/proc.js";

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

describe("pmagent demo: one whole doc_update cycle", () => {
  it("runs every role through a worker, opens the pull request in the local forge, refuses the truncating update and prints Kai's digests", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "pmagent-demo-test-")), "demo");
    const r = await runCli(["demo", "--dir", dir], {
      env: { ...process.env, PMAGENT_DATABASE_URL: "postgres://ignored@127.0.0.1:1/x" },
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `pmagent demo — repository ${dir} (project "demo", SQLite ${join(dir, ".pmagent/pmagent.db")})`,
    );
    expect(r.stdout).toContain("lane layer_b/doc_update: Human → Aya → Sho → Tsugu → Gen → Hana → Human");
    for (const role of ["Aya", "Sho", "Tsugu", "Gen", "Hana"])
      expect(r.stdout).toMatch(new RegExp(`${role} +succeeded`));
    expect(r.stdout).toContain("rejected u2 (docs/guide.md): would shrink docs/guide.md from 15 to 3 lines");
    expect(r.stdout).toContain(
      'rejected u3 (README.md): path "README.md" is outside the allowed paths (STATE/, docs/, reports/)',
    );
    expect(r.stdout).toContain("#1 open pmagent/layer_b/doc_update/demo-docupdate-1 → main");
    expect(r.stdout).toMatch(/Kai — lane status:\n## layer_b \/ doc_update status/);
    expect(r.stdout).toContain("cycle-1 completed");
    expect(r.stdout).toMatch(/Kai — what changed:\n## What changed in demo/);
    // Kai reads the cycle's runs: the five role runs, and the pull request Tsugu opened.
    expect(r.stdout).toContain("5 pmagent runs (GitHub Actions not consulted)");
    // The week's headline is the completed cycle (ranked by significance), not the newest PR.
    expect(r.stdout).toContain("Top: layer_b/doc_update cycle-1 completed");
    expect(r.stdout).toContain("6 entries, 6 done.");

    // Every entry of the cycle ends done, with the lane's ids.
    const store = new SqliteStore(join(dir, ".pmagent/pmagent.db"));
    try {
      const board = new Blackboard(store, { projectId: "demo", humans: ["Human"] });
      const entries = await board.list();
      expect(entries.map((e) => [e.entry.id, e.entry.from, e.entry.to, e.entry.kind, e.entry.status])).toEqual([
        ["demo-docupdate-1", "Human", "Aya", "doc_update_proposal_request", "done"],
        ["demo-docupdate-1-review", "Aya", "Sho", "doc_update_review_request", "done"],
        ["demo-docupdate-1-review-apply", "Sho", "Tsugu", "doc_update_apply_request", "done"],
        ["demo-docupdate-1-review-apply-pm_snapshot", "Tsugu", "Gen", "pm_snapshot_request", "done"],
        ["demo-docupdate-1-review-apply-pm_snapshot-done", "Gen", "Hana", "pm_snapshot_done", "done"],
        ["demo-docupdate-1-review-apply-pm_snapshot-done-cycle_done", "Hana", "Human", "doc_update_cycle_done", "done"],
      ]);

      // Tsugu and Gen waited for OPEN_PR and were resumed with the pull request: two attempts each.
      const runs = await new RunStore(store, "demo").list({});
      expect(runs.map((x) => [x.role, x.state, x.attempt]).sort()).toEqual([
        ["Aya", "succeeded", 1],
        ["Gen", "succeeded", 2],
        ["Hana", "succeeded", 1],
        ["Sho", "succeeded", 1],
        ["Tsugu", "succeeded", 2],
      ]);

      // The branch is in the forge with the accepted update and Gen's snapshot, in one pull request.
      const bare = join(dir, ".pmagent/forge.git");
      const forge = new LocalForge({ store, projectId: "demo", root: dir, bareRepo: ".pmagent/forge.git" });
      const prs = await forge.list();
      expect(prs).toMatchObject([
        { number: 1, head: "pmagent/layer_b/doc_update/demo-docupdate-1", base: "main", state: "open" },
      ]);
      expect(git(bare, "rev-parse", "refs/heads/pmagent/layer_b/doc_update/demo-docupdate-1")).toBe(prs[0]!.head_sha);
      const changed = git(bare, "diff", "--name-only", "main", "pmagent/layer_b/doc_update/demo-docupdate-1").split(
        "\n",
      );
      // The updated document, and the proposal, review and snapshot at the roles contract's paths.
      expect(changed).toHaveLength(4);
      expect(changed[0]).toBe("STATE/current_state.md");
      expect(changed[1]).toMatch(
        /^reports\/doc_update_proposals\/\d{4}-\d{2}-\d{2}-demo-docupdate-1\/doc_update_proposal_v1\.json$/,
      );
      expect(changed[2]).toMatch(
        /^reports\/doc_update_reviews\/\d{4}-\d{2}-\d{2}-demo-docupdate-1\/doc_update_review_v1\.json$/,
      );
      expect(changed[3]).toMatch(/^reports\/pm_snapshots\/\d{4}-\d{2}-\d{2}_demo\.md$/);
      expect(
        git(bare, "log", "--format=%an %s", "main..pmagent/layer_b/doc_update/demo-docupdate-1").split("\n"),
      ).toEqual([
        "Gen reports: PM snapshot of demo-docupdate-1",
        "Tsugu docs(state): apply doc_update_review_v1 demo-docupdate-1",
        "Sho reports: doc_update_review_v1 of demo-docupdate-1",
        "Aya reports: doc_update_proposal_v1 of demo-docupdate-1",
      ]);
      const state = git(bare, "show", "pmagent/layer_b/doc_update/demo-docupdate-1:STATE/current_state.md");
      expect(state).toMatch(/### Gaps[\s\S]*### Progress\n\nThe first full doc_update cycle ran through pmagent/);
      expect(git(bare, "show", "pmagent/layer_b/doc_update/demo-docupdate-1:docs/guide.md")).toBe(
        git(dir, "show", "main:docs/guide.md"),
      );
      expect(git(dir, "status", "--porcelain")).toBe(""); // the project's own checkout is untouched

      // Sho's review artifact: the truncation guard refused the truncating update.
      const review = DocUpdateReviewSchema.parse(
        JSON.parse(git(bare, "show", `pmagent/layer_b/doc_update/demo-docupdate-1:${changed[2]}`)),
      );
      expect(review.update_judgements.map((d) => [d.update_id, d.decision])).toEqual([
        ["u1", "accept"],
        ["u2", "reject"],
        ["u3", "reject"],
      ]);
      expect(review.update_judgements[1]!.reason).toMatch(/from 15 to 3 lines.*ending mid-sentence/);

      // Gen's PM snapshot, as the pull request carries it.
      const snapshot = git(bare, "show", `pmagent/layer_b/doc_update/demo-docupdate-1:${changed[3]}`);
      for (const heading of ["## 1. Current", "## 2. Goals", "## 3. Gap", "## 4. Next 3"])
        expect(snapshot).toContain(heading);
      expect(snapshot).toContain("1. Review and merge pull request #1");
      expect(snapshot).toContain("- The guide does not describe the review guard yet.");
    } finally {
      await store.close();
    }
  }, 180_000);

  it("refuses a --dir that is not empty", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-demo-test-"));
    writeFileSync(join(dir, "keep.txt"), "mine\n");
    const r = await runCli(["demo", "--dir", dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--dir ${dir} is not empty: give a new or empty directory for the demo repository`);
    expect(existsSync(join(dir, ".git"))).toBe(false);
  });

  it("refuses a --timeout below one second before creating anything", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "pmagent-demo-test-")), "empty");
    mkdirSync(dir);
    const r = await runCli(["demo", "--dir", dir, "--timeout", "0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--timeout must be between 1 and ∞, got 0");
    expect(existsSync(join(dir, ".git"))).toBe(false);
  });
});
