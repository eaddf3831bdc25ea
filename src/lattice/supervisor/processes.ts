/** The sprite's process group as the supervisor handles it: stopping it, waiting for one it did not spawn. */
import { processAlive, signalGroup } from "../sandbox/index.js";
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
