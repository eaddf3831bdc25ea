/** `pmagent runs retry RUN [--agent NAME]`: the finished run's entry run again in the CLI's process, waited for; refusals say why. */
import { beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/proc.js";
import { availableStoreKinds } from "../helpers/stores.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("pmagent runs retry on $name", (kind) => {
  let env: NodeJS.ProcessEnv;

  const fx = useSupervisorFixture(kind, { config: { oa: { gate: false } } });
  beforeEach(async () => {
    env = { ...process.env, ...fx.ts.env };
  });

  it("runs the entry again with the run's own command (the finished entry re-opened) and prints the new run; bad input is refused", async () => {
    const sup = fx.tp.supervisor();
    const command = fx.tp.sprite("fails", {
      steps: [{ log: "trying" }, { emit: "ERROR", payload: { message: "no luck" } }, { exit: 1 }],
    });
    await sup.board.post("Human", {
      id: "e-1",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "build it" },
    });
    const first = await sup.startRun({ role: "Builder", entryId: "e-1", command });
    expect(first.state).toBe("failed");

    const again = await runCli(["runs", "retry", first.id, "--format", "json"], { cwd: fx.tp.root, env });
    expect(again.stderr).toMatch(/^running run_\S+ on entry \S+ \(re-opened from e-1\)$/m);
    const out = JSON.parse(again.stdout) as {
      run: { id: string; state: string; command: string[]; entry_id: string };
      entry_id: string;
      reopened_from: string;
    };
    // The same sprite, so the same failure: exit 1, the new run of the re-opened entry says so.
    expect(again.code).toBe(1);
    expect(out).toMatchObject({ reopened_from: "e-1", run: { state: "failed", command, entry_id: out.entry_id } });
    expect(out.run.id).not.toBe(first.id);
    expect((await sup.board.get(out.entry_id)).entry).toMatchObject({
      from: "Human",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "build it" },
    });
    // Posted by the person who asked, saying what it re-opens (the run's failure note came after).
    expect((await sup.board.history(out.entry_id))[0]).toMatchObject({
      actor: "Human",
      to_status: "open",
      changes: { entry: { note: `re-opened from e-1 to run it again (run ${first.id} was failed)` } },
    });

    const robot = await runCli(["runs", "retry", first.id, "--as", "Builder"], { cwd: fx.tp.root, env });
    expect([robot.code, robot.stderr.trim()]).toEqual([
      1,
      "pmagent: Builder may not run a run again: only a human (Human) may [permission_refused]",
    ]);
    const agent = await runCli(["runs", "retry", first.id, "--agent", "codex"], { cwd: fx.tp.root, env });
    expect([agent.code, agent.stderr.trim()]).toEqual([
      2,
      'pmagent: agent "codex" is not configured: no role of pmagent.config.json runs an agent (runner.agent); leave the agent out to run the role\'s own runner [unknown_agent]',
    ]);
    const missing = await runCli(["runs", "retry", "run_nope"], { cwd: fx.tp.root, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("[run_not_found]");
  });
});
