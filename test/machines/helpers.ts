/**
 * Machines simulated on this one: each runs its commands in a mount namespace of its own where a
 * tmpfs covers the other machines' directories, so it cannot read or write their files. They share
 * only what real machines would: the PostgreSQL store (over loopback), and what is installed
 * (node, git, pmagent's dist, the test sprites).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { runProcess, type ProcResult } from "../helpers/proc.js";

/** Whether this process may make mount namespaces (root, unshare present). */
export const canUnshare = spawnSync("unshare", ["-m", "--propagation", "private", "true"]).status === 0;

export interface Machine {
  name: string;
  root: string;
  /** Run argv on this machine (cwd its root unless given), the other machines' roots hidden. */
  run(argv: string[], options?: { cwd?: string; env?: Record<string, string> }): Promise<ProcResult>;
  /** Start argv on this machine and return at once: the process is argv itself (exec'd), to kill as a machine dies. */
  start(argv: string[]): ChildProcess;
}

/**
 * Machines named `names`, each with its own root directory; `env` (the store's) reaches them all.
 * `elsewhere`: directories no machine sees (another host's, such as the forge's server).
 */
export function machines(
  roots: Record<string, string>,
  env: Record<string, string>,
  elsewhere: string[] = [],
): Record<string, Machine> {
  const out: Record<string, Machine> = {};
  for (const [name, root] of Object.entries(roots)) {
    const hidden = [
      ...Object.entries(roots)
        .filter(([other]) => other !== name)
        .map(([, r]) => r),
      ...elsewhere,
    ];
    // `mount` each hidden root over with an empty tmpfs, then exec the command in that view.
    const script = `${hidden.map((_, i) => `mount -t tmpfs -o size=1m none "$H${i}" || exit 97;`).join(" ")} exec "$@"`;
    const hide = Object.fromEntries(hidden.map((h, i) => [`H${i}`, h]));
    const unshareArgs = ["-m", "--propagation", "private", "sh", "-c", script, "sh"];
    out[name] = {
      name,
      root,
      run(argv, options = {}) {
        return runProcess("unshare", [...unshareArgs, ...argv], {
          cwd: options.cwd ?? root,
          env: { ...process.env, ...env, ...hide, PMAGENT_MACHINE: name, ...options.env },
        });
      },
      start(argv) {
        return spawn("unshare", [...unshareArgs, ...argv], {
          cwd: root,
          env: { ...process.env, ...env, ...hide, PMAGENT_MACHINE: name },
          stdio: ["ignore", "pipe", "pipe"],
        });
      },
    };
  }
  return out;
}

/** A free TCP port on loopback (for a server that cannot be told to pick one itself). */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The team's forge on its own "host": `git daemon` serving the bare repositories under `dir` over
 * git's protocol on loopback, pushes allowed. Resolves once it is ready (its own word for it).
 */
export async function gitDaemon(dir: string): Promise<{ url: (repo: string) => string; stop: () => void }> {
  const { spawn } = await import("node:child_process");
  const port = await freePort();
  const child = spawn(
    "git",
    [
      "daemon",
      "--verbose",
      "--reuseaddr",
      "--export-all",
      "--enable=receive-pack",
      `--base-path=${dir}`,
      "--listen=127.0.0.1",
      `--port=${port}`,
      dir,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  await new Promise<void>((resolve, reject) => {
    let said = "";
    child.stderr.on("data", (d: Buffer) => {
      said += d.toString();
      if (said.includes("Ready to rumble")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`git daemon exited ${code}: ${said}`)));
  });
  return { url: (repo) => `git://127.0.0.1:${port}/${repo}`, stop: () => child.kill("SIGTERM") };
}
