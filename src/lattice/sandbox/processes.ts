/** Process identity across supervisor restarts: a pid plus its start time, so a reused pid is not mistaken for the sprite. */
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { delimiter, resolve } from "node:path";

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

/** The process's command name (/proc/<pid>/comm: its executable's name, cut to 15 bytes), or null when gone or not on Linux. */
export function processName(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trimEnd();
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

/**
 * Every live process whose environment names run `runId` (LATTICE_RUN_ID=<runId>, which the
 * supervisor gives the sprite and everything it starts inherits), with whether it leads its
 * process group. Zombies and processes not ours to read are left out. Linux (/proc) only: empty elsewhere.
 */
export function processesOfRun(runId: string): Array<{ pid: number; leader: boolean }> {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const needle = `LATTICE_RUN_ID=${runId}\0`;
  const found: Array<{ pid: number; leader: boolean }> = [];
  const self = String(process.pid);
  for (const p of pids) {
    if (p === self) continue;
    try {
      const environ = environHead(p);
      if (!environ.startsWith(needle) && !environ.includes(`\0${needle}`)) continue;
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z") found.push({ pid: Number(p), leader: fields[2] === p });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/**
 * How much of a process's environment is read. A sprite's environment is small (the supervisor
 * builds it), so the run's id lies well within; reading it all would let processes with huge
 * environments (a hostile sprite's) make every scan slow. One that moved the id past this point is missed.
 */
const ENVIRON_BYTES = 64 * 1024;
/** Made on the first scan: every command loads this module, few scan. */
let environBuffer: Buffer | undefined;

/** The first ENVIRON_BYTES of /proc/<pid>/environ (throws when gone or not ours to read). */
function environHead(pid: string): string {
  const fd = openSync(`/proc/${pid}/environ`, "r");
  try {
    const buffer = (environBuffer ??= Buffer.alloc(ENVIRON_BYTES));
    return buffer.toString("latin1", 0, readSync(fd, buffer, 0, ENVIRON_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * The sprite of a run whose pid was never recorded (the supervisor died right after spawning it):
 * the process-group leader whose environment has LATTICE_RUN_ID=<runId>. Linux (/proc) only.
 */
export function findSpriteOfRun(runId: string): number | null {
  return processesOfRun(runId).find((p) => p.leader)?.pid ?? null;
}

/** util-linux's setpriv (always installed on Debian): sets the parent-death signal, then execs the command. */
export const SETPRIV = "/usr/bin/setpriv";

/**
 * `argv` wrapped so that the process gets SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG,
 * which Node cannot call itself): a sprite dies with its supervisor instead of running on beside
 * the sprite of a worker that took its entry over. The wrapper execs the command, so the pid is
 * the sprite's. The signal fires when the parent *thread* exits: spawn from the main thread (as
 * child_process does). Where setpriv is missing (not Linux), `argv` is returned as it is; the
 * takeover fence still kills the old sprite. Composes with other wrappers (a sandbox): wrap the
 * outermost argv, the one the supervisor spawns.
 */
export function dieWithParent(
  argv: readonly string[],
  where: { cwd: string; path: string },
  setpriv: string = SETPRIV,
): string[] {
  // A command that cannot be found is spawned as it is, so that its spawn error still says so.
  if (argv.length === 0 || !existsSync(setpriv) || !findExecutable(argv[0]!, where.path, { cwd: where.cwd }))
    return [...argv];
  return [setpriv, "--pdeathsig", "KILL", "--", ...argv];
}

/**
 * Where `command` resolves as execvp would (a path with a slash as given, relative to `cwd`; else
 * the first executable file of that name along `path`, skipping the directories in `skip`), or
 * undefined. The one PATH lookup of the module: the sandbox, the parent-death wrapper and the CLI use it.
 */
export function findExecutable(
  command: string,
  path: string,
  opts: { cwd?: string; skip?: readonly string[] } = {},
): string | undefined {
  const cwd = opts.cwd ?? process.cwd();
  const skip = (opts.skip ?? []).map((d) => resolve(cwd, d));
  const candidates = command.includes("/")
    ? [resolve(cwd, command)]
    : path
        .split(delimiter)
        .filter((dir) => dir !== "" && !skip.includes(resolve(cwd, dir)))
        .map((dir) => resolve(cwd, dir, command));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * SIGKILL a process group that may outlive its leader (the leader was killed by its parent-death
 * signal; what it started lives on). Never falls back to a bare pid, which
 * may have been reused by now. Returns whether a process got the signal.
 */
export function killGroup(pgid: number): boolean {
  return signalProcess(-pgid, "SIGKILL");
}

/** Send `sig` to `pid` (a negative pid: that process group); false when there is none to get it. */
export function signalProcess(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}
