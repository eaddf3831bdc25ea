import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunStore } from "../../src/lattice/index.js";
import { CLI } from "../helpers/proc.js";
import { openPostgresTestStore, postgresAvailable, type TestStore } from "../helpers/stores.js";
import { sh as git } from "../lattice/fixtures.js";
import { gitInit, scenarioSprite } from "../lattice/helpers.js";
import { canUnshare, machines, type Machine } from "./helpers.js";

const ready = canUnshare && (await postgresAvailable());

/**
 * Two machines that cannot see each other's files, one PostgreSQL store: a run waits on A and is
 * resumed from B, where it continues from the checkpoint A shared through the store.
 */
describe.skipIf(!ready)("a run across machines", () => {
  let ts: TestStore;
  let base: string;
  let a: Machine;
  let b: Machine;
  let sprite: string[];

  beforeAll(async () => {
    ts = await openPostgresTestStore();
    base = mkdtempSync(join(tmpdir(), "pmagent-machines-"));
    const shared = join(base, "installed");
    mkdirSync(shared);
    const rootA = join(base, "A");
    mkdirSync(rootA);
    const config = {
      project_id: "machines",
      humans: ["Human"],
      lanes: [{ layer: "t", name: "build", roles: [{ name: "Builder", allowed_kinds: ["build_request"] }] }],
    };
    writeFileSync(join(rootA, "pmagent.config.json"), JSON.stringify(config, null, 2));
    writeFileSync(join(rootA, "README.md"), "# the project\n");
    gitInit(rootA, "the project's first commit");
    // B is a clone of the same repository, as a second machine's checkout would be.
    git(base, "clone", "-q", rootA, join(base, "B"));
    sprite = scenarioSprite(shared, "resume", {
      steps: [
        { file: { path: "work.txt", text: "made on machine A\n" } },
        { sh: "echo the agent session from A > $HOME/session.txt" },
        { waiting: { reason: "review", expected_inputs: { ok: "boolean" } } },
      ],
      on_resume: [
        {
          sh: `cat work.txt; cat $HOME/session.txt; git log --format=%s -1; ls -A ${rootA} | wc -l | sed 's/^/other root entries: /'`,
        },
        { emit: "COMPLETED", payload: { status: "success" } },
      ],
    });
    ({ A: a, B: b } = machines({ A: rootA, B: join(base, "B") }, ts.env) as { A: Machine; B: Machine });
  });
  afterAll(async () => {
    await ts?.cleanup();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it("waits on A, resumes from B on B from the shared checkpoint, and B never sees A's files", async () => {
    expect((await b.run(["sh", "-c", `ls -A ${a.root} | wc -l`])).stdout.trim()).toBe("0");
    const started = await a.run([
      process.execPath,
      CLI,
      "run",
      "--role",
      "Builder",
      "--format",
      "json",
      "--",
      ...sprite,
    ]);
    expect(started.code, started.stderr).toBe(0);
    const waiting = JSON.parse(started.stdout) as { id: string; state: string; host: string; workspace: string };
    expect(waiting).toMatchObject({ state: "waiting", host: "A" });
    expect(waiting.workspace.startsWith(a.root)).toBe(true);

    const resumed = await b.run([
      process.execPath,
      CLI,
      "resume",
      waiting.id,
      "--input",
      "ok=true",
      "--format",
      "json",
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const runs = new RunStore(ts.store, "machines");
    const done = await runs.get(waiting.id);
    expect(done).toMatchObject({
      state: "succeeded",
      host: "B",
      attempt: 2,
      workspace: join(b.root, ".pmagent", "workspaces", waiting.id),
    });
    const lines = (await runs.logs(waiting.id, { stream: "stdout" })).map((l) => l.text);
    // The file A's sprite made, its HOME (an agent's session), the repository's history through B's own objects, and nothing of A.
    expect(lines).toEqual(
      expect.arrayContaining([
        "made on machine A",
        "the agent session from A",
        "the project's first commit",
        "other root entries: 0",
      ]),
    );
    // Either machine says where the run is now.
    const shown = await a.run([process.execPath, CLI, "runs", "show", waiting.id]);
    expect(shown.stdout).toMatch(/^machine: {4}B$/m);
  });

  it("a resume queued on A is carried out by a worker on B, which A's files never reach", async () => {
    const started = await a.run([
      process.execPath,
      CLI,
      "run",
      "--role",
      "Builder",
      "--format",
      "json",
      "--",
      ...sprite,
    ]);
    expect(started.code, started.stderr).toBe(0);
    const waiting = JSON.parse(started.stdout) as { id: string };
    const queued = await a.run([process.execPath, CLI, "resume", waiting.id, "--queue", "--input", "ok=true"]);
    expect(queued.code, queued.stderr).toBe(0);
    expect(queued.stdout).toMatch(
      /^queued: a worker of Builder resumes it \(pmagent worker --role Builder, on any machine\)$/m,
    );
    const worker = await b.run([process.execPath, CLI, "worker", "--role", "Builder", "--once", "--format", "json"]);
    expect(worker.code, worker.stderr).toBe(0);
    expect(JSON.parse(worker.stdout.trim())).toMatchObject({
      id: waiting.id,
      state: "succeeded",
      host: "B",
      attempt: 2,
    });
    const lines = (await new RunStore(ts.store, "machines").logs(waiting.id, { stream: "stdout" })).map((l) => l.text);
    expect(lines).toEqual(
      expect.arrayContaining([
        "made on machine A",
        "the agent session from A",
        "the project's first commit",
        "other root entries: 0",
      ]),
    );
  });
});
