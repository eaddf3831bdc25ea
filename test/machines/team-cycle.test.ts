import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codeLane } from "../../src/config/index.js";
import { CLI } from "../helpers/proc.js";
import { openPostgresTestStore, postgresAvailable, type TestStore } from "../helpers/stores.js";
import { sh as git } from "../lattice/fixtures.js";
import { gitInit, scenarioSprite } from "../lattice/helpers.js";
import { canUnshare, gitDaemon, machines, type Machine } from "./helpers.js";

const ready = canUnshare && (await postgresAvailable());

/**
 * A lane cycle whose roles run on different machines: the Developer on A, the Reviewer on B, one
 * PostgreSQL store, and the forge on a third host (git daemon on loopback) that neither machine
 * sees as files. The work passes as commits on the cycle's branch in that forge and ends in one
 * merged pull request there.
 */
describe.skipIf(!ready)("a lane cycle across machines", () => {
  let ts: TestStore;
  let base: string;
  let forgeDir: string;
  let daemon: Awaited<ReturnType<typeof gitDaemon>>;
  let a: Machine;
  let b: Machine;
  let hold: string;

  beforeAll(async () => {
    ts = await openPostgresTestStore();
    base = mkdtempSync(join(tmpdir(), "pmagent-team-machines-"));
    const installed = join(base, "installed");
    mkdirSync(installed);
    hold = join(installed, "HOLD");
    forgeDir = join(base, "forge-host");
    mkdirSync(forgeDir);
    daemon = await gitDaemon(forgeDir);
    const sprite = (name: string, scenario: unknown) => scenarioSprite(installed, name, scenario);
    const lane = codeLane();
    const commands: Record<string, string[]> = {
      // While the HOLD file exists, the Developer of entry "slow" stops halfway (a worker killed then dies mid-run).
      Developer: sprite("developer", {
        steps: [
          { file: { path: "greet.js", text: "export const greet = () => 'hello';\n" } },
          { emit: "INFO", payload: { message: "greet.js written" } },
          { sh: `if [ -f ${hold} ] && [ "$LATTICE_WORK_ITEM_ID" = slow ]; then sleep 600; fi` },
          { emit: "COMPLETED", payload: { status: "success", summary: "greet()" } },
        ],
      }),
      Reviewer: sprite("reviewer", {
        steps: [
          { sh: "grep -q hello greet.js && echo 'greet(): approved' > REVIEWS.md" },
          { emit: "COMPLETED", payload: { status: "success", outcome: "approved", summary: "looks right" } },
        ],
      }),
    };
    const config = {
      project_id: "team-machines",
      humans: ["Human"],
      forge: { remote: daemon.url("forge.git") },
      lanes: [
        {
          ...lane,
          roles: lane.roles.map((r) => ({
            ...r,
            credentials: [],
            runner: { command: commands[r.name]!, timeout_s: 120 },
          })),
        },
      ],
    };
    const rootA = join(base, "A");
    mkdirSync(rootA);
    writeFileSync(join(rootA, "pmagent.config.json"), JSON.stringify(config, null, 2));
    writeFileSync(join(rootA, "README.md"), "# greet\n");
    gitInit(rootA, "start");
    git(base, "clone", "-q", "--bare", rootA, join(forgeDir, "forge.git"));
    // B's checkout comes from the team's forge, over its protocol.
    git(base, "clone", "-q", daemon.url("forge.git"), join(base, "B"));
    ({ A: a, B: b } = machines({ A: rootA, B: join(base, "B") }, ts.env, [forgeDir]) as { A: Machine; B: Machine });
  });
  /** Resolve once `sql` finds a row (another process stores it), or fail naming what did not come. */
  async function stored(sql: string, what: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await ts.store.get(sql))) {
      if (Date.now() > deadline) throw new Error(`${what} was not stored within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  afterAll(async () => {
    daemon?.stop();
    await ts?.cleanup();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it("the Developer on A, the Reviewer on B: one branch, a commit of each, one pull request, merged in the team's forge", async () => {
    expect((await a.run(["sh", "-c", `ls -A ${forgeDir} | wc -l`])).stdout.trim()).toBe("0");
    const post = await a.run([
      process.execPath,
      CLI,
      "bb",
      "post",
      "--as",
      "Human",
      "--to",
      "Developer",
      "--kind",
      "code_request",
      "--id",
      "greet",
      "--summary",
      "add greet()",
    ]);
    expect(post.code, post.stderr).toBe(0);
    const dev = await a.run([process.execPath, CLI, "worker", "--role", "Developer", "--once", "--format", "json"]);
    expect(dev.code, dev.stderr).toBe(0);
    expect(JSON.parse(dev.stdout.trim())).toMatchObject({
      state: "succeeded",
      host: "A",
      cycle: { branch: "pmagent/code/code/greet", pull_request: { number: 1 } },
    });
    const rev = await b.run([process.execPath, CLI, "worker", "--role", "Reviewer", "--once", "--format", "json"]);
    expect(rev.code, rev.stderr).toBe(0);
    const reviewed = JSON.parse(rev.stdout.trim());
    expect(reviewed).toMatchObject({
      state: "succeeded",
      host: "B",
      cycle: { branch: "pmagent/code/code/greet", pull_request: { number: 1 } },
    });

    // In the forge itself (on its own host): the branch holds a commit of each role, main the merge.
    const forge = join(forgeDir, "forge.git");
    expect(git(forge, "log", "--format=%an | %s", "pmagent/code/code/greet").split("\n")).toEqual([
      "Reviewer | Reviewer: greet-review",
      "Developer | Developer: greet",
      "t | start",
    ]);
    expect(git(forge, "rev-parse", "main")).toBe(reviewed.cycle.merged);
    expect(git(forge, "show", "main:greet.js")).toBe("export const greet = () => 'hello';");
    expect(git(forge, "show", "main:REVIEWS.md")).toBe("greet(): approved");
    const prs = await ts.store.all<{ number: number; state: string }>(
      "SELECT number, state FROM lattice_forge_pulls WHERE project_id = 'team-machines'",
    );
    expect(prs.map((p) => [Number(p.number), p.state])).toEqual([[1, "merged"]]);
  });

  it("a worker on A killed mid-run: B takes the entry over once its lease is out, and the cycle holds one commit of the role", async () => {
    writeFileSync(hold, "");
    expect(
      (
        await a.run([
          process.execPath,
          CLI,
          "bb",
          "post",
          "--as",
          "Human",
          "--to",
          "Developer",
          "--kind",
          "code_request",
          "--id",
          "slow",
          "--summary",
          "add greet() slowly",
        ])
      ).code,
    ).toBe(0);
    const worker = a.start([process.execPath, CLI, "worker", "--role", "Developer"]);
    const died = new Promise((r) => worker.once("exit", r));
    await stored(
      "SELECT 1 AS x FROM lattice_run_events e JOIN lattice_runs r ON r.id = e.run_id WHERE r.entry_id = 'slow' AND e.event_type = 'INFO' AND e.event_json LIKE '%greet.js written%'",
      "A's INFO greet.js written",
    );
    worker.kill("SIGKILL");
    await died;
    rmSync(hold);
    // Time passing, without waiting the lease out: A's claim runs out now.
    await ts.store.run(
      "UPDATE bb_entries SET lease_expires_ms = ? WHERE project_id = 'team-machines' AND id = 'slow'",
      [Date.now() - 1],
    );
    const takeover = await b.run([
      process.execPath,
      CLI,
      "worker",
      "--role",
      "Developer",
      "--once",
      "--format",
      "json",
    ]);
    expect(takeover.code, takeover.stderr).toBe(0);
    const done = JSON.parse(takeover.stdout.trim());
    expect(done).toMatchObject({
      entry_id: "slow",
      state: "succeeded",
      host: "B",
      cycle: { branch: "pmagent/code/code/slow" },
    });
    const runs = await ts.store.all<{ id: string; host: string; state: string }>(
      "SELECT id, host, state FROM lattice_runs WHERE project_id = 'team-machines' AND entry_id = 'slow' ORDER BY created_ms",
    );
    expect(runs.map((r) => [r.host, r.state])).toEqual([
      ["A", "canceled"],
      ["B", "succeeded"],
    ]);
    // A's events stored once each; the entry finished by B's run alone, one Developer commit on the branch.
    const infos = await ts.store.all<{ n: number | string }>(
      "SELECT COUNT(*) AS n FROM lattice_run_events WHERE run_id = ? AND event_type = 'INFO' AND event_json LIKE '%greet.js written%'",
      [runs[0]!.id],
    );
    expect(Number(infos[0]!.n)).toBe(1);
    expect(git(join(forgeDir, "forge.git"), "log", "--format=%an", "pmagent/code/code/slow").split("\n")).toEqual([
      "Developer",
      "t",
    ]);
    const entry = await ts.store.get<{ status: string }>(
      "SELECT status FROM bb_entries WHERE project_id = 'team-machines' AND id = 'slow'",
    );
    expect(entry?.status).toBe("done");
  });
});
