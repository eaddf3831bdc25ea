/**
 * Installing or selecting a tool for a role's later runs, from what this machine can reach, into a
 * directory of its own (`.pmagent/tools/<role|global>/<proposal>/`) whose bin directory goes first
 * on the PATH of those runs:
 * - npm: the real `npm install --global --prefix DIR SPEC` (a registry name or a local tarball);
 * - deb: `apt-get download NAME` (or a local .deb file), then `dpkg-deb -x` into DIR. No root is
 *   needed, nothing outside DIR changes, and undoing is removing DIR; a package's own dependencies
 *   are not fetched (name them too);
 * - path: a runtime already on this machine's PATH whose `--version` matches, linked into DIR/bin.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { PmagentError } from "../../core/index.js";
import { findExecutable } from "../sandbox/index.js";

export type ToolSource = "npm" | "deb" | "path";

/** One thing installed or selected: where it is and which directories hold its programs. */
export interface InstalledTool {
  source: ToolSource;
  /** The npm spec, Debian package (or .deb file), or the executable selected. */
  package: string;
  /** Directories to put first on the PATH (absolute). */
  bin: string[];
}

/** A failed install: the installer's reason (the tail of its output), recorded with the change. */
export class InstallFailed extends PmagentError {
  constructor(message: string) {
    super("install_failed", message, { kind: "unavailable" });
  }
}

interface Ran {
  code: number;
  output: string;
}

function runTool(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((done) => {
    let output = "";
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.once("error", (e) => done({ code: 127, output: `${argv[0]}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "command not found" : e.message}` }));
    child.once("close", (code) => done({ code: code ?? 1, output }));
  });
}

/** The last lines of an installer's output: enough to say why, never the whole log. */
function tail(output: string): string {
  const lines = output.trim().split("\n").filter((l) => l.trim() !== "");
  const text = lines.slice(-4).join(" | ");
  return text.length > 600 ? `…${text.slice(-600)}` : text || "no output";
}

async function must(what: string, argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const r = await runTool(argv, cwd, env);
  if (r.code !== 0) throw new InstallFailed(`${what} failed (\`${argv.join(" ")}\` exited with ${r.code}): ${tail(r.output)}`);
}

/** A local file named relative to the project root, or the spec as given (a registry name). */
function localOr(spec: string, root: string): string {
  return spec.startsWith(".") || spec.startsWith("/") ? resolve(root, spec) : spec;
}

export const isTarball = (spec: string) => /\.(tgz|tar\.gz)$/.test(spec);
export const isDeb = (spec: string) => spec.endsWith(".deb");

/** `npm install --global --prefix DIR SPEC`: the package's bins land in DIR/bin. */
export async function npmInstall(spec: string, dir: string, root: string, env: NodeJS.ProcessEnv): Promise<InstalledTool> {
  mkdirSync(dir, { recursive: true });
  const pkg = localOr(spec, root);
  if (pkg !== spec && !existsSync(pkg)) throw new InstallFailed(`npm package file ${pkg} does not exist`);
  await must(`npm install of ${spec}`, ["npm", "install", "--global", "--prefix", dir, "--no-audit", "--no-fund", "--no-update-notifier", pkg], root, env);
  const bin = join(dir, "bin");
  if (!existsSync(bin) || readdirSync(bin).length === 0) throw new InstallFailed(`npm installed ${spec} but it has no programs (no "bin" in its package.json)`);
  return { source: "npm", package: spec, bin: [bin] };
}

/** A Debian package unpacked into DIR (apt-get download, or a local .deb), its bin directories on the PATH. */
export async function debInstall(name: string, dir: string, root: string, env: NodeJS.ProcessEnv): Promise<InstalledTool> {
  mkdirSync(dir, { recursive: true });
  let file = localOr(name, root);
  if (isDeb(name)) {
    if (!existsSync(file)) throw new InstallFailed(`Debian package file ${file} does not exist`);
  } else {
    if (!/^[a-z0-9][a-z0-9+.-]*(=[A-Za-z0-9.+~:-]+)?$/.test(name)) throw new InstallFailed(`"${name}" is not a Debian package name`);
    const download = mkdtempSync(join(dir, ".download-"));
    await must(`apt-get download of ${name}`, ["apt-get", "download", "-q", name], download, env);
    const debs = readdirSync(download).filter(isDeb);
    if (debs.length !== 1) throw new InstallFailed(`apt-get download of ${name} left ${debs.length} .deb files`);
    file = join(download, debs[0]!);
  }
  await must(`unpacking ${name}`, ["dpkg-deb", "-x", file, dir], root, env);
  for (const d of readdirSync(dir)) if (d.startsWith(".download-")) rmSync(join(dir, d), { recursive: true, force: true });
  const bin = ["usr/local/bin", "usr/bin", "usr/sbin", "bin", "sbin"].map((d) => join(dir, d)).filter((d) => existsSync(d));
  if (bin.length === 0) throw new InstallFailed(`the Debian package ${name} holds no programs (no usr/bin, bin or sbin)`);
  return { source: "deb", package: name, bin };
}

/** Whether `apt-get download NAME` can find the package here (the local package lists). */
export async function aptKnows(name: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const r = await runTool(["apt-cache", "show", "--no-all-versions", name], "/", env);
  return r.code === 0 && r.output.includes("Package:");
}

/** Whether `exe --version` reports `version` (a prefix of its version number: "20" matches v20.11.1). */
async function reports(exe: string, version: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const r = await runTool([exe, "--version"], "/", env);
  const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return r.code === 0 && new RegExp(`(^|[^0-9.])v?${escaped}(?![0-9])`).test(r.output);
}

/** A runtime already on this machine's PATH (RUNTIME<version>, RUNTIME-<version>, RUNTIME) that reports the version. */
export async function findRuntime(runtime: string, version: string | undefined, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const path = env.PATH ?? "";
  const names = version ? [`${runtime}${version}`, `${runtime}-${version}`, runtime] : [runtime];
  for (const n of names) {
    const exe = findExecutable(n, path);
    if (exe && (!version || (await reports(exe, version, env)))) return exe;
  }
  return undefined;
}

/** Link a runtime found on the PATH into DIR/bin under its plain name, so that name runs that version. */
export function selectRuntime(runtime: string, exe: string, dir: string): InstalledTool {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  rmSync(join(bin, runtime), { force: true });
  symlinkSync(exe, join(bin, runtime));
  return { source: "path", package: exe, bin: [bin] };
}
