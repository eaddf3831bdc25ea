/**
 * The progress watchdog (config `runner.idle_timeout_s`): a sprite that goes quiet is stopped and
 * its run fails with a reason naming the last thing it said; output keeps it alive; 0 turns it off.
 * No timers here: the sprites go quiet, the test waits on the run's end.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { testProject } from "../helpers.js";

const kinds = await availableStoreKinds();

/** A shell line printing one Lattice event on stdout (a shell starts at once: no startup time counts against the 1 s). */
const event = (type: string, payload: Record<string, unknown>) =>
  `printf '%s\\n' "LATTICE_EVENT {\\"protocol_version\\":\\"v1\\",\\"event_type\\":\\"${type}\\",\\"sprite_id\\":\\"$LATTICE_SPRITE_ID\\",\\"work_item_id\\":\\"$LATTICE_WORK_ITEM_ID\\",\\"timestamp\\":\\"2026-01-15T10:30:00Z\\",\\"payload\\":${JSON.stringify(JSON.stringify(payload)).slice(1, -1)}}"`;

const lane = (runner: Record<string, unknown>) => ({
  lanes: [
    {
      layer: "test",
      name: "build",
      roles: [{ name: "Builder", allowed_kinds: ["build_request"], runner: { command: ["true"], ...runner } }],
    },
  ],
});

describe.each(kinds)("the progress watchdog on $name", (kind) => {
  it("stops a sprite that went quiet: the run fails naming its last message", { timeout: 60_000 }, async () => {
    const ts = await kind.open();
    const tp = testProject(ts, lane({ idle_timeout_s: 1 }));
    try {
      const sup = tp.supervisor();
      const command = ["sh", "-c", `${event("INFO", { message: "calling the model" })}; exec sleep 600`];
      const run = await sup.startRun({ role: "Builder", command });
      expect(run.state).toBe("failed");
      expect(run.reason).toBe(
        "no output and no event for 1 s (runner.idle_timeout_s); the sprite was stopped; its last message: calling the model",
      );
    } finally {
      tp.cleanup();
      await ts.cleanup();
    }
  });

  it(
    "says so when the quiet sprite never sent a message; output keeps a sprite alive past the limit",
    { timeout: 60_000 },
    async () => {
      const ts = await kind.open();
      const tp = testProject(ts, lane({ idle_timeout_s: 1 }));
      try {
        const sup = tp.supervisor();
        const silent = await sup.startRun({ role: "Builder", command: ["sh", "-c", "sleep 600"] });
        expect(silent.reason).toBe(
          "no output and no event for 1 s (runner.idle_timeout_s); the sprite was stopped; it sent no message",
        );
        // Three seconds in all, a line every 0.3 s: never a whole second quiet.
        const chatty = [
          "sh",
          "-c",
          `for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; sleep 0.3; done; ${event("COMPLETED", { status: "success" })}`,
        ];
        const run = await sup.startRun({ role: "Builder", command: chatty });
        expect(run.state, run.reason ?? "").toBe("succeeded");
      } finally {
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});

describe("runner.idle_timeout_s", () => {
  it("is a whole number of seconds, 0 turning the watchdog off", () => {
    const config = (runner: Record<string, unknown>) => JSON.stringify({ project_id: "p", ...lane(runner) });
    expect(parseConfig(config({ idle_timeout_s: 0 }), "c.json").lanes[0]!.roles[0]!.runner?.idle_timeout_s).toBe(0);
    expect(() => parseConfig(config({ idle_timeout_s: -1 }), "c.json")).toThrow(
      /runner\.idle_timeout_s: Too small: expected number to be >=0/,
    );
    expect(() => parseConfig(config({ idle_timeout_s: 1.5 }), "c.json")).toThrow(
      "runner.idle_timeout_s: Invalid input: expected int, received number",
    );
  });
});
