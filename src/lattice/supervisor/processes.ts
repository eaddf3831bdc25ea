/** The sprite's process group as the supervisor handles it: stopping it, waiting for one it did not spawn. */
import { processAlive, processesOfRun, signalGroup } from "../sandbox/index.js";
import type { Exit } from "./context.js";

const KILL_GRACE_MS = 3000;

/** SIGTERM to the group, SIGKILL after a grace period. */
export function stopGroup(pid: number): void {
  signalGroup(pid, "SIGTERM");
  setTimeout(() => signalGroup(pid, "SIGKILL"), KILL_GRACE_MS).unref();
}

/** Exit of a process that is not our child (re-attached after a restart): poll until it is gone. */
export function waitForExit(pid: number, started: string | null, pollMs: number): Promise<Exit> {
  return new Promise((resolveExit) => {
    const check = () => {
      if (!processAlive(pid, started)) resolveExit({ code: null, signal: null });
      else setTimeout(check, pollMs);
    };
    check();
  });
}

/** How long what a sprite left behind may take to die once SIGKILLed before the run is drained anyway. */
const LEFT_BEHIND_MS = 5000;

/**
 * Once the sprite's process has gone: every process still naming the run (LATTICE_RUN_ID) is
 * stopped as a group is (SIGTERM, SIGKILL after the grace period) and waited for, so nothing
 * writes to the outbox after the final drain. The sandboxed command outlives bwrap for a moment
 * when bwrap dies of its parent-death signal (the supervisor crashed), and a sprite's children
 * outlive it; the events they wrote after the drain were lost. `lingered`: how many still ran a
 * moment after the first signal (the sandbox's own teardown is over by then; none in an ordinary
 * exit); `left`: how many still ran when the wait gave up.
 */
export async function endRunProcesses(runId: string, pollMs: number): Promise<{ lingered: number; left: number }> {
  let left = processesOfRun(runId);
  let lingered: number | undefined;
  const termed = new Set<number>();
  const start = Date.now();
  while (left.length > 0 && Date.now() - start < KILL_GRACE_MS + LEFT_BEHIND_MS) {
    const kill = Date.now() - start >= KILL_GRACE_MS;
    for (const { pid } of left) {
      // SIGTERM once each (a handler saving its work is not interrupted again), SIGKILL after the grace.
      if (!kill && termed.has(pid)) continue;
      termed.add(pid);
      try {
        process.kill(pid, kill ? "SIGKILL" : "SIGTERM");
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, Math.min(pollMs, 20)));
    left = processesOfRun(runId);
    lingered ??= left.length;
  }
  return { lingered: lingered ?? 0, left: left.length };
}
