/**
 * What an environment proposal may name, checked when the proposal is recorded, shown, and
 * accepted. A sprite writes the proposal, and accepting it runs installers outside the sprite's
 * sandbox, so every name is a bare name that can be neither a path nor an option:
 * - a runtime, dependency manager or package: `^[A-Za-z0-9][A-Za-z0-9._+-]*$`, no `..`;
 * - a version: `^[A-Za-z0-9][A-Za-z0-9._+~-]*$`, no `..` (no ranges such as `^1.2` or `>=1`);
 * - a package spec: a name, or `name@version` (npm) or `name=version` (apt), each part as above;
 * - a package file (`.tgz`, `.tar.gz`, `.deb`): an absolute, normal path (where it is is checked
 *   when accepting, see changes.ts: never the project's directory, where sprites write).
 */
import { isAbsolute, normalize } from "node:path";
import { RefusedError } from "../../core/index.js";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+~-]*$/;
const MAX = 128;

export const isTarball = (spec: string) => /\.(tgz|tar\.gz)$/.test(spec);
export const isDeb = (spec: string) => spec.endsWith(".deb");
/** A package named by its file rather than by its name. */
export const isPackageFile = (spec: string) => spec.includes("/") || isTarball(spec) || isDeb(spec);

/** The refusal of an unsafe proposal: what it names and why, and what the human can do. */
export function unsafeProposal(id: string, type: string, what: string): RefusedError {
  return new RefusedError(
    "proposal_refused",
    `environment proposal ${id} (${type}) cannot be accepted: ${what}; reject it (\`pmagent env reject ${id}\`)`,
  );
}

const shown = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

function bare(value: string, rule: RegExp): boolean {
  return value.length <= MAX && rule.test(value) && !value.includes("..");
}

/** Why `value` is not a bare name (runtime, manager, package), or null. */
export function nameProblem(value: string, what: string): string | null {
  return bare(value, NAME)
    ? null
    : `${what} ${shown(value)} is not a bare name (letters, digits and . _ + -, starting with a letter or digit, no "..", at most ${MAX} characters)`;
}

/** Why `value` is not a version, or null. */
export function versionProblem(value: string, what: string): string | null {
  return bare(value, VERSION)
    ? null
    : `${what} ${shown(value)} is not a version (letters, digits and . _ + ~ -, starting with a letter or digit, no "..", no ranges)`;
}

/** Why `spec` is neither a package spec (name, name@version, name=version) nor a package file's absolute path, or null. */
export function packageProblem(spec: string, what: string): string | null {
  if (isPackageFile(spec)) {
    const normal =
      isAbsolute(spec) &&
      normalize(spec) === spec &&
      // eslint-disable-next-line no-control-regex
      !/[\u0000-\u001f\u007f]/.test(spec) &&
      (isTarball(spec) || isDeb(spec));
    return normal
      ? null
      : `${what} ${shown(spec)} is neither a bare package name nor the absolute, normal path of a .tgz, .tar.gz or .deb file`;
  }
  const at = spec.search(/[@=]/);
  const ok = at < 0 ? bare(spec, NAME) : bare(spec.slice(0, at), NAME) && bare(spec.slice(at + 1), VERSION);
  return ok
    ? null
    : `${what} ${shown(spec)} is not a bare package name (letters, digits and . _ + -, starting with a letter or digit, no "..", no "/"), optionally with @VERSION or =VERSION`;
}

type Kind = "name" | "version" | "package";
const CHECK: Record<Kind, (v: string, what: string) => string | null> = {
  name: nameProblem,
  version: versionProblem,
  package: packageProblem,
};

/** The names a proposal's details give to installers, with what each is (the keys changes.ts and adjustments.ts read). */
function namesOf(type: string, d: Record<string, unknown>): Array<{ key: string; value: unknown; kind: Kind }> {
  const some = (key: string, kind: Kind) => (d[key] === undefined ? [] : [{ key, value: d[key], kind }]);
  switch (type) {
    case "runtime_install":
    case "runtime_version_adjust":
      return [
        ...some("runtime", "name"),
        ...some("name", "name"),
        ...some("version", "version"),
        ...some("package", "package"),
      ];
    case "add_system_package": {
      const list = Array.isArray(d.packages)
        ? d.packages.map((value, i) => ({ key: `packages[${i}]`, value, kind: "package" as const }))
        : some("packages", "package");
      return [...list, ...some("package", "package"), ...some("name", "package")];
    }
    case "dependency_manager_switch":
      return [
        ...some("to", "name"),
        ...some("manager", "name"),
        ...some("dependency_manager", "name"),
        ...some("package", "package"),
      ];
    default:
      return [];
  }
}

/** Why a proposal's details name something an installer must not be given (a path, an option, "..", a range), or null. */
export function namesProblem(type: string, d: Record<string, unknown>): string | null {
  for (const { key, value, kind } of namesOf(type, d)) {
    const text = typeof value === "number" ? String(value) : value;
    if (typeof text !== "string") return `details.${key} is not a string`;
    const problem = CHECK[kind](text.trim(), `details.${key}`);
    if (problem) return problem;
  }
  return null;
}
