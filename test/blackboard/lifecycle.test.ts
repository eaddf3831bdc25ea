import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATUSES, TRANSITIONS, type Status } from "../../src/blackboard/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { request, testBoard } from "../helpers/blackboard.js";

const kinds = await availableStoreKinds();

/** DESIGN.md §2, written out independently of the implementation's table. */
const allowed = new Set([
  "open>in_progress",
  "open>done",
  "in_progress>done",
  "open>error",
  "in_progress>error",
  "open>canceled",
  "in_progress>canceled",
]);

describe.each(kinds)("status lifecycle ($name)", (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => t.cleanup());

  it("the implementation's table is exactly the designed one", () => {
    const actual = STATUSES.flatMap((from) => TRANSITIONS[from].map((to) => `${from}>${to}`));
    expect(new Set(actual)).toEqual(allowed);
  });

  /** Bring a fresh entry to `status` through allowed steps. */
  async function entryAt(id: string, status: Status) {
    const { board } = testBoard(t.store);
    await board.post("Human", request(id));
    if (status === "in_progress" || status === "done") await board.transition("Aya", id, "in_progress");
    if (status !== "open" && status !== "in_progress") await board.transition("Aya", id, status);
    return board;
  }

  const matrix = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as const));
  it.each(matrix)("%s → %s", async (from, to) => {
    const id = `m-${from}-${to}`;
    const board = await entryAt(id, from);
    const before = await board.get(id);
    expect(before.entry.status).toBe(from);
    if (allowed.has(`${from}>${to}`)) {
      const after = await board.transition("Aya", id, to);
      expect(after.entry.status).toBe(to);
      expect(after.version).toBe(before.version + 1);
      const last = (await board.history(id)).at(-1)!;
      expect(last).toMatchObject({
        actor: "Aya",
        action: "status",
        from_status: from,
        to_status: to,
        changes: { status: { from, to } },
      });
    } else {
      const err = await board.transition("Aya", id, to).catch((e: Error & { code: string }) => e);
      expect(err).toMatchObject({ code: "transition_refused" });
      expect((err as Error).message).toContain(`entry ${id}`);
      expect((err as Error).message).toContain("Aya");
      expect((err as Error).message).toContain(`${from} → ${to}`);
      expect((err as Error).message).toMatch(
        from === to ? /already/ : TRANSITIONS[from].length === 0 ? /terminal/ : /allowed from/,
      );
      expect((await board.get(id)).version).toBe(before.version);
    }
  });
});

describe.each(kinds)("permissions ($name)", (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => t.cleanup());

  // Entry written by Sho, addressed to Tsugu; Human is the configured human.
  const actors = [
    ["Sho", true, "its writer"],
    ["Tsugu", true, "its addressee"],
    ["Human", true, "a human"],
    ["Aya", false, "another role"],
    ["Gen", false, "another role"],
  ] as const;
  const targets: Status[] = ["in_progress", "done", "error", "canceled"];

  it.each(actors.flatMap(([actor, ok, who]) => targets.map((to) => [actor, to, ok, who] as const)))(
    "%s moving open → %s: allowed=%s (%s)",
    async (actor, to, ok) => {
      const { board } = testBoard(t.store);
      const id = `p-${actor}-${to}`;
      await board.post("Sho", request(id, { to: "Tsugu", kind: "doc_update_apply_request" }));
      if (ok) {
        expect((await board.transition(actor, id, to)).entry.status).toBe(to);
      } else {
        const err = await board.transition(actor, id, to).catch((e: Error) => e);
        expect(err).toMatchObject({ code: "permission_refused" });
        expect((err as Error).message).toBe(
          `entry ${id}: ${actor} may not move it open → ${to}: only its writer (Sho), its addressee (Tsugu) or a human (Human) may change it`,
        );
        expect((await board.get(id)).entry.status).toBe("open");
      }
    },
  );

  it("a field change by an outsider is refused as well", async () => {
    const { board } = testBoard(t.store);
    await board.post("Sho", request("p-field", { to: "Tsugu" }));
    await expect(board.change("Gen", "p-field", { note: "mine now" })).rejects.toThrow(
      "entry p-field: Gen may not change it",
    );
  });

  it("only a human may post an entry in someone else's name", async () => {
    const { board } = testBoard(t.store);
    await expect(board.post("Aya", request("p-forge", { from: "Sho" }))).rejects.toThrow(
      "Aya may not post an entry written by Sho",
    );
    const { stored } = await board.post("Human", request("p-human", { from: "Sho" }));
    expect(stored.entry.from).toBe("Sho");
  });
});
