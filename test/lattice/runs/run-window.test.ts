import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStore, type RunState } from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("runs overlapping a window ($name)", (kind) => {
  let t: TestStore;
  let runs: RunStore;
  let clock = 0;
  const run = async (id: string, role: string, createdAt: number, end?: { at: number; state: RunState }) => {
    clock = createdAt;
    await runs.create({
      id,
      project_id: "p",
      role,
      entry_id: `entry-${id}`,
      sprite_id: role.toLowerCase(),
      work_item_id: id,
      command: ["true"],
      workspace: "/w",
      checkpoint_dir: "/c",
      run_dir: "/r",
      worker: null,
      host: "h",
      supervisor_pid: 1,
      gate: null,
    });
    if (end === undefined) return;
    await runs.update(id, { state: "running" });
    clock = end.at;
    await runs.update(id, { state: end.state, ...(end.state === "waiting" ? {} : { finished: true }) });
  };
  beforeEach(async () => {
    t = await kind.open();
    runs = new RunStore(t.store, "p", () => clock);
    await run("starting-aya", "Aya", 1_000);
    await run("waiting-sho", "Sho", 2_000, { at: 2_500, state: "waiting" });
    await run("running-other-role", "Zed", 2_000, { at: 2_500, state: "waiting" });
    await run("finished-in-window", "Aya", 3_000, { at: 5_000, state: "succeeded" });
    await run("finished-before", "Sho", 1_500, { at: 2_000, state: "failed" });
    await run("created-after", "Aya", 20_000);
    await new RunStore(t.store, "other-project", () => clock).create({
      id: "elsewhere",
      project_id: "other-project",
      role: "Aya",
      entry_id: null,
      sprite_id: "aya",
      work_item_id: "w",
      command: ["true"],
      workspace: "/w",
      checkpoint_dir: "/c",
      run_dir: "/r",
      worker: null,
      host: "h",
      supervisor_pid: 1,
      gate: null,
    });
  });
  afterEach(async () => t.cleanup());

  it("gives the runs of the roles created by the end that had not finished before the start, oldest first", async () => {
    const found = await runs.overlapping({ roles: ["Aya", "Sho"], sinceMs: 3_000, untilMs: 10_000 });
    expect(found.map((r) => [r.id, r.state])).toEqual([
      ["starting-aya", "starting"],
      ["waiting-sho", "waiting"],
      ["finished-in-window", "succeeded"],
    ]);
    expect((await runs.overlapping({ roles: ["Zed"], sinceMs: 3_000, untilMs: 10_000 })).map((r) => r.id)).toEqual([
      "running-other-role",
    ]);
    expect((await runs.overlapping({ roles: ["Sho"], sinceMs: 1_000, untilMs: 1_800 })).map((r) => r.id)).toEqual([
      "finished-before",
    ]);
    expect(await runs.overlapping({ roles: [], sinceMs: 0, untilMs: 10_000 })).toEqual([]);
  });
});
