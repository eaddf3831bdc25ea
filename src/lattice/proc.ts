/** Process identity across supervisor restarts: a pid plus its start time, so a reused pid is not mistaken for the sprite. */
import { readdirSync, readFileSync } from "node:fs";

/** The process's start time (clock ticks since boot, from /proc), or null where /proc is missing. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22; the command name (field 2) may contain spaces, so count from its closing paren.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the process `pid` (started at `started`, when known) still runs (zombies count as gone). */
export function processAlive(pid: number, started: string | null = null): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false;
  } catch {
    return true;
  }
  return started === null || processStartTime(pid) === started;
}

/** Signal a sprite's whole process group (it is started as a group leader). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * The sprite of a run whose pid was never recorded (the supervisor died right after spawning it):
 * the process-group leader whose environment has LATTICE_RUN_ID=<runId>. Linux (/proc) only.
 */
export function findSpriteOfRun(runId: string): number | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const needle = `LATTICE_RUN_ID=${runId}\0`;
  for (const p of pids) {
    try {
      const environ = readFileSync(`/proc/${p}/environ`, "utf8");
      if (!environ.startsWith(needle) && !environ.includes(`\0${needle}`)) continue;
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[2] === p && fields[0] !== "Z") return Number(p);
    } catch {
      // gone, or not ours to read
    }
  }
  return null;
}
