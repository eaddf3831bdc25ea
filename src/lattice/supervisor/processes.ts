/** The sprite's processes as the supervisor handles them: stopping them, waiting for ones it did not spawn. */
import { processAlive, processesOfRun, processName, signalGroup } from "../sandbox/index.js";
import type { Exit } from "./context.js";

const KILL_GRACE_MS = 3000;

/** Signal one process; false when it is gone. */
function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stop run `runId`'s sprite, whose process is `pid`: SIGTERM, then SIGKILL to its process group
 * after a grace period, so an agent may save its work and say why it stopped. A sandboxed sprite's
 * process is bwrap, which a SIGTERM ends at once, the sandbox with it (its parent-death SIGKILL),
 * while the command inside runs in a session of its own and never sees the group's signal: there
 * the run's own processes get the SIGTERM (bwrap's init in the namespace ignores it), and bwrap
 * exits when the command does.
 */
export function stopSprite(pid: number, runId: string): void {
  if (processName(pid) === "bwrap") {
    for (const p of processesOfRun(runId)) if (p.pid !== pid) signal(p.pid, "SIGTERM");
  } else signalGroup(pid, "SIGTERM");
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
      signal(pid, kill ? "SIGKILL" : "SIGTERM");
    }
    await new Promise((r) => setTimeout(r, Math.min(pollMs, 20)));
    left = processesOfRun(runId);
    lingered ??= left.length;
  }
  return { lingered: lingered ?? 0, left: left.length };
}
