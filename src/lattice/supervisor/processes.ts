/** The sprite's processes as the supervisor handles them: stopping them, waiting for ones it did not spawn. */
import { setTimeout as sleep } from "node:timers/promises";
import { killGroup, processAlive, processesOfRun, processName, signalProcess } from "../sandbox/index.js";
import type { Exit } from "./context.js";

const KILL_GRACE_MS = 3000;

/** SIGTERM each of `pids` not sent one yet (`termed`): a handler saving its work is not interrupted again. */
function termOnce(pids: Iterable<number>, termed: Set<number>): void {
  for (const pid of pids) {
    if (termed.has(pid)) continue;
    termed.add(pid);
    signalProcess(pid, "SIGTERM");
  }
}

/** Whether any process is left in process group `pgid`. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Stop run `runId`'s sprite, whose process is `pid`: SIGTERM, then SIGKILL to its process group
 * after a grace period, so an agent may save its work and say why it stopped. A sandboxed sprite's
 * process is bwrap, which a SIGTERM ends at once, the sandbox with it (its parent-death SIGKILL),
 * while the command inside runs in a session of its own and never sees the group's signal: there
 * the run's own processes get the SIGTERM (bwrap's init in the namespace ignores it; one bwrap
 * starts later in the grace period gets it too), and bwrap exits when the command does.
 * Resolves once the group is gone or killed: a caller that exits soon (`pmagent runs cancel`)
 * awaits it, or nothing would send the SIGKILL.
 */
export async function stopSprite(pid: number, runId: string): Promise<void> {
  const sandboxed = processName(pid) === "bwrap";
  const termed = new Set<number>([pid]);
  const termRun = () =>
    termOnce(
      processesOfRun(runId).map((p) => p.pid),
      termed,
    );
  if (sandboxed) termRun();
  // The group only: every sprite leads its own (spawned detached), and the pid alone may be reused.
  else signalProcess(-pid, "SIGTERM");
  const deadline = Date.now() + KILL_GRACE_MS;
  while (groupAlive(pid) && Date.now() < deadline) {
    await sleep(50);
    if (sandboxed) termRun();
  }
  // The group, never the bare pid: once the group is gone the pid may be another process's.
  killGroup(pid);
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
    const pids = left.map((p) => p.pid);
    if (Date.now() - start < KILL_GRACE_MS) termOnce(pids, termed);
    else for (const pid of pids) signalProcess(pid, "SIGKILL");
    await sleep(Math.min(pollMs, 20));
    left = processesOfRun(runId);
    lingered ??= left.length;
  }
  return { lingered: lingered ?? 0, left: left.length };
}
