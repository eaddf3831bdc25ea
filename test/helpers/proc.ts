import { spawn, type SpawnOptions } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** `--import` value that lets a child node process load TypeScript sources (from any cwd). */
export const TSX_IMPORT = pathToFileURL(join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;

/** The built CLI (`npm test` builds first, so tests drive the same binary users run). */
export const CLI = join(REPO_ROOT, "dist/cli/main.js");

export interface ProcResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run a process to completion, collecting its output. */
export function runProcess(command: string, args: string[], options: SpawnOptions & { input?: string } = {}): Promise<ProcResult> {
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
