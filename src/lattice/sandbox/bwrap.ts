/**
 * Bubblewrap: finding a bwrap that works here (`findSandboxTool`) and wrapping a sprite's argv in
 * it (`sandboxArgv`) from a spec of what is writable, readable, hidden and overlaid.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { UnavailableError } from "../../core/index.js";
import { realpathOr } from "./paths.js";
import { findExecutable } from "./processes.js";

export type SandboxMode = "required" | "auto" | "off";

/** bwrap's namespaces and limits for every sprite (also the probe that bwrap works here). */
const BWRAP_FLAGS = ["--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL", "--die-with-parent", "--new-session"];
const probed = new Map<string, string | null>();

/** Whether bwrap can make a sandbox on this machine (once per process): null, or what went wrong. */
function probeBwrap(bwrap: string): string | null {
  if (!probed.has(bwrap)) {
    const r = spawnSync(bwrap, ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...BWRAP_FLAGS, "true"], {
      encoding: "utf8",
      timeout: 10_000,
    });
    probed.set(
      bwrap,
      r.status === 0
        ? null
        : (r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n").slice(-2).join(" "),
    );
  }
  return probed.get(bwrap) ?? null;
}

/**
 * The bubblewrap binary sprites run in, per the config's `sandbox` mode and the supervisor's PATH.
 * `off`: none. `auto`: bwrap when it is installed and works, else none with a warning to log.
 * `required`: bwrap, or a typed error saying how to install it.
 */
export function findSandboxTool(mode: SandboxMode, path: string): { bwrap: string | null; warning?: string } {
  if (mode === "off") return { bwrap: null };
  const bwrap = findExecutable("bwrap", path);
  const failed = bwrap ? probeBwrap(bwrap) : null;
  if (bwrap && failed === null) return { bwrap };
  const problem = bwrap
    ? `bubblewrap (${bwrap}) cannot make a sandbox here (${failed})`
    : "bubblewrap (bwrap) is not installed (not found on PATH)";
  if (mode === "required") {
    throw new UnavailableError(
      "sandbox_unavailable",
      `sandbox is "required" in pmagent.config.json but ${problem}: install it with \`apt-get install bubblewrap\` (unprivileged user namespaces must be allowed), or set "sandbox": "auto"`,
    );
  }
  return {
    bwrap: null,
    warning: `SPRITES RUN WITHOUT A SANDBOX: ${problem}. A sprite can read this user's files, the secrets file, the store and the supervisor's environment (/proc), and push with git. Install it: apt-get install bubblewrap (or set "sandbox": "off" in pmagent.config.json to run unsandboxed on purpose)`,
  };
}

/** Where the workspace is also mounted inside the sandbox (the path the Lattice spec gives sprites). */
export const SANDBOX_WORKSPACE = "/workspace";

export interface SandboxSpec {
  bwrap: string;
  /** Writable, at its own path and at /workspace; the sprite starts in it. */
  workspace: string;
  /** Writable too (the run's checkpoint directory and HOME, the violations log). */
  writable: string[];
  /** Visible read-only even when under a hidden path (the project root, the run's shims, pmagent itself). */
  readable: string[];
  /** Not visible: a directory becomes an empty tmpfs, a file reads as empty. Missing paths are skipped. */
  hidden: string[];
  /** Files bound read-only over others (the git and gh wrappers over the real programs). */
  overlays: Array<{ source: string; dest: string }>;
  /** "none": a network namespace of its own (no route out, not even to this machine's loopback). */
  network?: "host" | "none";
}

const depth = (p: string) => p.split("/").filter(Boolean).length;

/**
 * Wrap a sprite's argv in bubblewrap: the host's root read-only (entry by entry, so /workspace can
 * be made in the sandbox's own root), a private /tmp, /dev and /proc (its own PID namespace: no
 * /proc of the supervisor), the hidden paths covered, the workspace writable, no capabilities
 * (root without them cannot unmount what hides a path), killed with its parent. Mounts go
 * shallowest first so a path made visible again under a hidden one stays visible.
 */
export function sandboxArgv(argv: readonly string[], spec: SandboxSpec): string[] {
  const ops = new Map<string, string[]>();
  // A later mount of the same path replaces an earlier one (the workspace may be the project root).
  const put = (dest: string, args: string[]) => {
    ops.delete(dest);
    ops.set(dest, args);
  };
  for (const name of readdirSync("/")) {
    const p = `/${name}`;
    if (["/proc", "/dev", "/tmp"].includes(p)) continue;
    try {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) put(p, ["--symlink", readlinkSync(p), p]);
      else if (st.isDirectory() || st.isFile()) put(p, ["--ro-bind", p, p]);
    } catch {
      // gone meanwhile
    }
  }
  put("/dev", ["--dev", "/dev"]);
  put("/proc", ["--proc", "/proc"]);
  put("/tmp", ["--tmpfs", "/tmp"]);
  for (const p of spec.hidden.map(realpathOr)) {
    try {
      put(p, statSync(p).isDirectory() ? ["--tmpfs", p] : ["--ro-bind", "/dev/null", p]);
    } catch {
      // nothing there to hide
    }
  }
  for (const p of spec.readable.map(realpathOr)) if (existsSync(p)) put(p, ["--ro-bind", p, p]);
  const workspace = realpathOr(spec.workspace);
  for (const p of [workspace, ...spec.writable.map(realpathOr)]) if (existsSync(p)) put(p, ["--bind", p, p]);
  if (workspace !== SANDBOX_WORKSPACE) put(SANDBOX_WORKSPACE, ["--bind", workspace, SANDBOX_WORKSPACE]);
  for (const o of spec.overlays) put(o.dest, ["--ro-bind", o.source, o.dest]);
  const mounts = [...ops.entries()]
    .map(([dest, args], i) => ({ d: depth(dest), i, args }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .flatMap((m) => m.args);
  const network = spec.network === "none" ? ["--unshare-net"] : [];
  return [spec.bwrap, ...mounts, "--remount-ro", "/", ...BWRAP_FLAGS, ...network, "--chdir", workspace, "--", ...argv];
}
