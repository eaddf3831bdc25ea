import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Blackboard } from "../../../src/blackboard/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { testProject, type TestProject } from "../helpers.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("lane progression of a revision request on $name", (kind) => {
  let ts: TestStore;
  let tp: TestProject;
  let board: Blackboard;
  beforeEach(async () => {
    ts = await kind.open();
    tp = testProject(ts);
    board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
  });
  afterEach(async () => {
    await ts.cleanup();
    tp.cleanup();
  });

  it("a successful run whose COMPLETED asks for a revision posts the next entry with payload.details", async () => {
    await board.post("Human", { id: "r-1", to: "Builder", kind: "build_request" });
    const changes = ["restore the Risks section"];
    const command = tp.sprite("soft", {
      steps: [
        {
          emit: "COMPLETED",
          payload: {
            status: "success",
            summary: "review revise at soft_gate",
            revision_requested: true,
            requested_changes: changes,
          },
        },
      ],
    });
    const run = await tp.supervisor().startRun({ role: "Builder", entryId: "r-1", command });
    expect(run.state).toBe("succeeded");
    const next = await board.get("r-1-review");
    expect(next.entry.payload).toEqual({
      refs: { source_board_id: "r-1", run_id: run.id, artifacts: [] },
      summary: "review revise at soft_gate",
      details: { revision_requested: true, requested_changes: changes },
    });
  });

  it("without a revision request the next entry has no details", async () => {
    await board.post("Human", { id: "r-2", to: "Builder", kind: "build_request" });
    const command = tp.sprite("plain", {
      steps: [{ emit: "COMPLETED", payload: { status: "success", summary: "fine", revision_requested: false } }],
    });
    const run = await tp.supervisor().startRun({ role: "Builder", entryId: "r-2", command });
    expect(run.state).toBe("succeeded");
    expect((await board.get("r-2-review")).entry.payload).toEqual({
      refs: { source_board_id: "r-2", run_id: run.id, artifacts: [] },
      summary: "fine",
    });
  });
});
