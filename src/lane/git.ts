import { execFileSync } from "node:child_process";
import { UnavailableError } from "../core/index.js";

/** Run git in `cwd` (inside a sprite this is the supervisor's shim, which refuses push). */
export function git(cwd: string, args: string[]): string {
  try {
    return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new UnavailableError("git_failed", `git ${args[0]} failed in ${cwd}: ${(e.stderr ?? e.message).trim().slice(0, 500)}`);
  }
}

/** A branch-name-safe form of an entry id. */
export function branchSlug(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/\.{2,}/g, ".").replace(/^[-.]+|[-.]+$/g, "") || "cycle";
}
