import { describe, expect, it } from "vitest";
import { availableStoreKinds } from "../../helpers/stores.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("lane progression of a revision request on $name", (kind) => {
  const fx = useSupervisorFixture(kind);

  it("a successful run whose COMPLETED asks for a revision posts the next entry with payload.details", async () => {
    await fx.board.post("Human", { id: "r-1", to: "Builder", kind: "build_request" });
    const changes = ["restore the Risks section"];
    const command = fx.tp.sprite("soft", {
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
    const run = await fx.tp.supervisor().startRun({ role: "Builder", entryId: "r-1", command });
    expect(run.state).toBe("succeeded");
    const next = await fx.board.get("r-1-review");
    expect(next.entry.payload).toEqual({
      refs: { source_board_id: "r-1", run_id: run.id, artifacts: [] },
      summary: "review revise at soft_gate",
      details: { revision_requested: true, requested_changes: changes },
    });
  });

  it("without a revision request the next entry has no details", async () => {
    await fx.board.post("Human", { id: "r-2", to: "Builder", kind: "build_request" });
    const command = fx.tp.sprite("plain", {
      steps: [{ emit: "COMPLETED", payload: { status: "success", summary: "fine", revision_requested: false } }],
    });
    const run = await fx.tp.supervisor().startRun({ role: "Builder", entryId: "r-2", command });
    expect(run.state).toBe("succeeded");
    expect((await fx.board.get("r-2-review")).entry.payload).toEqual({
      refs: { source_board_id: "r-2", run_id: run.id, artifacts: [] },
      summary: "fine",
    });
  });
});
