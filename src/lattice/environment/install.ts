/**
 * Installing or selecting a tool for a role's later runs, from what this machine can reach, into a
 * directory of its own (`.pmagent/tools/<role|global>/<proposal>/`) whose bin directory goes first
 * on the PATH of those runs:
 * - npm: `npm install --global --prefix DIR --ignore-scripts SPEC` (a registry name or a package file);
 * - deb: `apt-get download NAME` (or a package file), then `dpkg-deb -x` into DIR. No root is
 *   needed, nothing outside DIR changes, and undoing is removing DIR; a package's own dependencies
 *   are not fetched (name them too);
 * - path: a runtime already on this machine's PATH whose `--version` matches, linked into DIR/bin.
 * A sprite proposed what is installed, so no installer runs with the supervisor's environment or
 * runs a package's code: each runs in bubblewrap where it is (a sprite's view of this machine, only
 * its own directory and a fresh HOME writable), always with a scrubbed environment, and npm with
 * `--ignore-scripts` (dpkg-deb -x runs no maintainer scripts). pip is not an installer here: a
 * source distribution runs its setup.py whatever the flags; were it added, `--only-binary :all:`.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PmagentError } from "../../core/index.js";
import { findExecutable, helperEnv, helperSandbox, sandboxArgv } from "../sandbox/index.js";
import { isDeb } from "./names.js";

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

/** An installer that has not finished in this long is stopped (and the install fails). */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

function runTool(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((done) => {
    let output = "";
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: INSTALL_TIMEOUT_MS,
      killSignal: "SIGKILL",
    });
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.once("error", (e) =>
      done({
        code: 127,
        output: `${argv[0]}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "command not found" : e.message}`,
      }),
    );
    child.once("close", (code, signal) =>
      done({
        code: code ?? 1,
        output: signal
          ? `${output}\nstopped by ${signal} (an installer gets ${INSTALL_TIMEOUT_MS / 60_000} min)`
          : output,
      }),
    );
  });
}

/** The last lines of an installer's output: enough to say why, never the whole log. */
function tail(output: string): string {
  const lines = output
    .trim()
    .split("\n")
    .filter((l) => l.trim() !== "");
  const text = lines.slice(-4).join(" | ");
  return text.length > 600 ? `…${text.slice(-600)}` : text || "no output";
}

/** How installers run: the isolation accepted proposals are applied with (see changes.ts). */
export interface InstallIsolation {
  /** The supervisor's environment: only its allow-listed variables reach an installer (helperEnv). */
  env: NodeJS.ProcessEnv;
  /** bubblewrap, or null: installers run unsandboxed, for the reason in `unsandboxed`. */
  bwrap: string | null;
  unsandboxed?: string;
  /** What an installer must not see (the sprites' hidden paths). */
  hidden: string[];
  /** The project root (read-only in the sandbox). */
  root: string;
}

/** Runs installers as InstallIsolation says, each with a fresh HOME of its own that is removed after. */
export class Installer {
  constructor(readonly isolation: InstallIsolation) {}

  /** How the installers run, in words (the plan shows it). */
  describe(): string {
    const how = "with a scrubbed environment (no token, a fresh HOME), no package scripts";
    return this.isolation.bwrap
      ? `in bubblewrap (${this.isolation.bwrap}: what sprites cannot see hidden, only the change's directory writable, the host's network) ${how}`
      : `NOT sandboxed (${this.isolation.unsandboxed ?? "no bubblewrap"}) but ${how}`;
  }

  /** Run one installer command in `cwd` (writable; default its fresh HOME), `readable` visible besides the root. */
  async run(argv: string[], o: { cwd?: string; readable?: string[] } = {}): Promise<Ran> {
    const home = mkdtempSync(join(tmpdir(), "pmagent-install-"));
    try {
      const cwd = o.cwd ?? home;
      const env = helperEnv(this.isolation.env, home);
      const { bwrap, hidden, root } = this.isolation;
      if (!bwrap) return await runTool(argv, cwd, env);
      env.TMPDIR = "/tmp";
      const spec = helperSandbox({
        bwrap,
        hidden,
        home: this.isolation.env.HOME,
        path: env.PATH,
        workspace: cwd,
        writable: [home],
        readable: [root, ...(o.readable ?? [])],
        network: "host",
      });
      return await runTool(sandboxArgv(argv, spec), cwd, env);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
}

async function must(
  what: string,
  argv: string[],
  installer: Installer,
  o: { cwd?: string; readable?: string[] },
): Promise<void> {
  const r = await installer.run(argv, o);
  if (r.code !== 0)
    throw new InstallFailed(`${what} failed (\`${argv.join(" ")}\` exited with ${r.code}): ${tail(r.output)}`);
}

/** The commands, exactly as they run (the plan shows them). */
export const npmInstallArgv = (spec: string, dir: string) => [
  "npm",
  "install",
  "--global",
  "--prefix",
  dir,
  "--ignore-scripts",
  "--no-audit",
  "--no-fund",
  "--no-update-notifier",
  spec,
];
export const aptShowArgv = (name: string) => ["apt-cache", "show", "--no-all-versions", name];
export const aptDownloadArgv = (name: string) => ["apt-get", "download", "-q", name];
export const debExtractArgv = (file: string, dir: string) => ["dpkg-deb", "-x", file, dir];
export const versionArgv = (exe: string) => [exe, "--version"];

/**
 * `npm install --global --prefix DIR --ignore-scripts SPEC`: the package's bins land in DIR/bin.
 * SPEC is a bare name (names.ts) or a package file checked by the caller (changes.ts).
 */
export async function npmInstall(spec: string, dir: string, installer: Installer): Promise<InstalledTool> {
  mkdirSync(dir, { recursive: true });
  if (spec.startsWith("/") && !existsSync(spec)) throw new InstallFailed(`npm package file ${spec} does not exist`);
  await must(`npm install of ${spec}`, npmInstallArgv(spec, dir), installer, {
    cwd: dir,
    readable: spec.startsWith("/") ? [spec] : [],
  });
  const bin = join(dir, "bin");
  if (!existsSync(bin) || readdirSync(bin).length === 0)
    throw new InstallFailed(`npm installed ${spec} but it has no programs (no "bin" in its package.json)`);
  return { source: "npm", package: spec, bin: [bin] };
}

/** A Debian package unpacked into DIR (apt-get download, or a package file), its bin directories on the PATH. */
export async function debInstall(name: string, dir: string, installer: Installer): Promise<InstalledTool> {
  mkdirSync(dir, { recursive: true });
  let file = name;
  if (isDeb(name)) {
    if (!existsSync(file)) throw new InstallFailed(`Debian package file ${file} does not exist`);
  } else {
    if (!/^[a-z0-9][a-z0-9+.-]*(=[A-Za-z0-9.+~:-]+)?$/.test(name))
      throw new InstallFailed(`"${name}" is not a Debian package name`);
    const download = mkdtempSync(join(dir, ".download-"));
    await must(`apt-get download of ${name}`, aptDownloadArgv(name), installer, { cwd: download });
    const debs = readdirSync(download).filter(isDeb);
    if (debs.length !== 1) throw new InstallFailed(`apt-get download of ${name} left ${debs.length} .deb files`);
    file = join(download, debs[0]!);
  }
  await must(`unpacking ${name}`, debExtractArgv(file, dir), installer, { cwd: dir, readable: [file] });
  for (const d of readdirSync(dir))
    if (d.startsWith(".download-")) rmSync(join(dir, d), { recursive: true, force: true });
  const bin = ["usr/local/bin", "usr/bin", "usr/sbin", "bin", "sbin"]
    .map((d) => join(dir, d))
    .filter((d) => existsSync(d));
  if (bin.length === 0)
    throw new InstallFailed(`the Debian package ${name} holds no programs (no usr/bin, bin or sbin)`);
  return { source: "deb", package: name, bin };
}

/** Whether `apt-get download NAME` can find the package here (the local package lists). */
export async function aptKnows(name: string, installer: Installer): Promise<boolean> {
  const r = await installer.run(aptShowArgv(name));
  return r.code === 0 && r.output.includes("Package:");
}

/** Whether `exe --version` reports `version` (a prefix of its version number: "20" matches v20.11.1). */
async function reports(exe: string, version: string, installer: Installer): Promise<boolean> {
  const r = await installer.run(versionArgv(exe));
  const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return r.code === 0 && new RegExp(`(^|[^0-9.])v?${escaped}(?![0-9])`).test(r.output);
}

/** The names a runtime is looked for by on the PATH: RUNTIME<version>, RUNTIME-<version>, RUNTIME. */
export const runtimeNames = (runtime: string, version: string | undefined) =>
  version ? [`${runtime}${version}`, `${runtime}-${version}`, runtime] : [runtime];

/** A runtime already on this machine's PATH (see runtimeNames) that reports the version. */
export async function findRuntime(
  runtime: string,
  version: string | undefined,
  installer: Installer,
): Promise<string | undefined> {
  const path = installer.isolation.env.PATH ?? "";
  for (const n of runtimeNames(runtime, version)) {
    const exe = findExecutable(n, path);
    if (exe && (!version || (await reports(exe, version, installer)))) return exe;
  }
  return undefined;
}

/** Link a runtime found on the PATH into DIR/bin under its plain (bare, names.ts) name, so that name runs that version. */
export function selectRuntime(runtime: string, exe: string, dir: string): InstalledTool {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  rmSync(join(bin, runtime), { force: true });
  symlinkSync(exe, join(bin, runtime));
  return { source: "path", package: exe, bin: [bin] };
}
