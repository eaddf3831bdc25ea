import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** `--import` value that lets a child node process load TypeScript sources (from any cwd). */
export const TSX_IMPORT = pathToFileURL(join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;

/** The built CLI (`npm test` builds first, so tests drive the same binary users run: the bundled bin). */
export const CLI = join(REPO_ROOT, "dist/bin/main.js");
/** tsc's output of the CLI, file by file: what the tests of its lazy loading trace. */
export const CLI_UNBUNDLED = join(REPO_ROOT, "dist/cli/main.js");

export interface ProcResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run a process to completion, collecting its output. */
export function runProcess(
  command: string,
  args: string[],
  options: SpawnOptions & { input?: string } = {},
): Promise<ProcResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    // A child that exits without reading its input (most do) closes the pipe: that is not an error.
    child.stdin!.on("error", () => undefined);
    child.stdin!.end(options.input ?? "");
  });
}

/** Run `pmagent ARGS…` from the build. */
export function runCli(args: string[], options: SpawnOptions & { input?: string } = {}): Promise<ProcResult> {
  return runProcess(process.execPath, [CLI, ...args], options);
}

export interface Served {
  child: ChildProcess;
  url: string;
  /** Everything it printed on stderr so far (for a failure's message). */
  stderr(): string;
  /** SIGTERM, and its exit code once it has exited. */
  stop(): Promise<number | null>;
}

/** `pmagent serve --port 0` from the build, once it has said where it listens. */
export async function serveCli(options: SpawnOptions & { args?: string[] } = {}): Promise<Served> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", ...(options.args ?? [])], {
    ...options,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`pmagent serve exited ${code}: ${out}${err}`)));
  });
  return {
    child,
    url,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
