import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Supervisor } from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { PMAGENT, testProject, type TestProject } from "../helpers.js";

const kinds = await availableStoreKinds();

/**
 * A run that waited under one machine name, resumed under another: here both "machines" share a
 * disk, so this checks the records and the messages; test/machines/ checks it across mount
 * namespaces that cannot see each other's files.
 */
describe.each(kinds)("a run resumed on another machine, on $name", (kind) => {
  let ts: TestStore;
  let a: TestProject;
  let bRoot: string;
  beforeEach(async () => {
    ts = await kind.open();
    a = testProject(ts);
    bRoot = mkdtempSync(join(tmpdir(), "pmagent-machine-b-"));
  });
  afterEach(async () => {
    await ts.cleanup();
    a.cleanup();
    rmSync(bRoot, { recursive: true, force: true });
  });

  const machineB = () =>
    new Supervisor({
      store: ts.store,
      project: { ...a.project, root: bRoot },
      pmagentCommand: PMAGENT,
      pollMs: 20,
      host: "machine-b",
    });

  async function waitOnA() {
    return a.supervisor(undefined, { host: "machine-a" }).startRun({
      role: "Builder",
      command: a.sprite("elsewhere", {
        steps: [
          { file: { path: "work.txt", text: "made on machine A\n" } },
          { waiting: { reason: "review", expected_inputs: { ok: "boolean" } } },
        ],
        on_resume: [{ sh: "cat work.txt" }, { emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
  }

  if (kind.name === "postgres") {
    it("continues on the other machine from the checkpoint shared in the store, in that machine's places", async () => {
      const waiting = await waitOnA();
      expect(waiting).toMatchObject({ state: "waiting", host: "machine-a" });
      const shared = await ts.store.all<{ checkpoint_id: string }>(
        "SELECT checkpoint_id FROM lattice_checkpoint_manifests WHERE run_id = ?",
        [waiting.id],
      );
      // The workspace's checkpoint and the sprite's HOME (where an agent keeps its session).
      expect(shared.map((r) => r.checkpoint_id).sort()).toEqual(
        [waiting.waiting!.checkpoint_id, waiting.waiting!.home_checkpoint_id].sort(),
      );
      // The resume on B reads nothing of A's: its vault is empty, A's checkpoint directory unused.
      rmSync(waiting.checkpoint_dir, { recursive: true, force: true });
      const sup = machineB();
      const r = await sup.resumeRun(waiting.id, { inputs: { ok: true } });
      const done = await r.finished;
      expect(done).toMatchObject({ state: "succeeded", host: "machine-b", attempt: 2 });
      expect(done.workspace).toBe(join(bRoot, ".pmagent", "workspaces", waiting.id));
      expect(done.checkpoint_dir).toBe(join(bRoot, ".pmagent", "checkpoints", waiting.id));
      expect(done.run_dir).toBe(join(bRoot, ".pmagent", "runs", waiting.id));
      expect((await sup.runs.logs(done.id)).map((l) => l.text)).toContain("made on machine A");
      expect(existsSync(join(bRoot, ".pmagent", "workspaces", waiting.id, "work.txt"))).toBe(true);
    });

    it("refuses a shared blob whose bytes are not its name: the run keeps waiting, nothing restored", async () => {
      const waiting = await waitOnA();
      await ts.store.run("UPDATE lattice_checkpoint_chunks SET data = ?", [Buffer.from("made on machine Z\n")]);
      const sup = machineB();
      await expect(sup.resumeRun(waiting.id, { inputs: { ok: true } })).rejects.toMatchObject({
        code: "checkpoint_not_found",
        message: expect.stringMatching(
          /^checkpoint chk_\S+ of run run_\S+ cannot be restored \(blob [0-9a-f]{12}… does not hold the content its name says .*\): the run cannot be resumed/,
        ),
      });
      expect(await sup.runs.get(waiting.id)).toMatchObject({ state: "waiting", host: "machine-a" });
      expect(existsSync(join(bRoot, ".pmagent", "workspaces", waiting.id, "work.txt"))).toBe(false);
    });
  } else {
    it("is refused with the reason: SQLite keeps checkpoints on the machine that waited", async () => {
      const waiting = await waitOnA();
      await expect(machineB().resumeRun(waiting.id, { inputs: { ok: true } })).rejects.toMatchObject({
        code: "checkpoint_not_found",
        message: `checkpoint ${waiting.waiting!.checkpoint_id} of run ${waiting.id} cannot be restored (it was kept on machine-a, and this store (sqlite) does not share checkpoints between machines: resume it on machine-a, or use PostgreSQL): the run cannot be resumed; cancel it with pmagent runs cancel ${waiting.id}`,
      });
    });
  }

  it("names the machine from PMAGENT_MACHINE, and refuses a name that is not one", () => {
    const env = { ...process.env, PMAGENT_MACHINE: "rack-7.b" };
    expect(new Supervisor({ store: ts.store, project: a.project, env }).host).toBe("rack-7.b");
    expect(
      () => new Supervisor({ store: ts.store, project: a.project, env: { ...env, PMAGENT_MACHINE: "a b/c" } }),
    ).toThrow(
      `PMAGENT_MACHINE must be a name of letters, digits, '.', '_' or '-' (at most 63, starting with a letter or digit), got "a b/c"`,
    );
  });
});
