/**
 * The `apply_patch` edit format the orchestrator's tool accepts: the Codex envelope.
 *
 *   *** Begin Patch
 *   *** Add File: docs/new.md          a new file; every line of it starts with '+'
 *   +# New
 *   *** Update File: STATE/plan.md      an existing file, changed by hunks
 *   *** Move to: STATE/plan-v2.md       (optional) and renamed
 *   @@ ## Steps                          a hunk; the text after '@@ ' (optional) is a line the hunk comes after
 *    context line                        ' ' unchanged, '-' removed, '+' added
 *   -old line
 *   +new line
 *   *** End of File                      (optional) the hunk ends at the end of the file
 *   *** Delete File: docs/old.md
 *   *** End Patch
 *
 * A hunk's context and removed lines must match the file (exactly, else ignoring trailing, else
 * surrounding whitespace), in order, after the previous hunk. A hunk with neither adds its lines
 * after its `@@` line, or at the end of the file when it names none. The first hunk of a file may
 * leave out its `@@` line. Every path is repository-relative and must be inside the allowed paths.
 * The patch applies whole or not at all: nothing is written until every operation checks out.
 */
import { existsSync, lstatSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { dirname, isAbsolute, posix, relative, sep } from "node:path";
import { pathRefusal } from "../config/index.js";
import { UsageError, RefusedError, confinePath, writeFileAtomic } from "../core/index.js";

export type PatchOperation =
  | { type: "add"; path: string; lines: string[] }
  | { type: "delete"; path: string }
  | { type: "update"; path: string; moveTo?: string; hunks: PatchHunk[] };

export interface PatchHunk {
  /** The line after `@@ `, when given: the hunk's lines come after it. */
  anchor?: string;
  lines: Array<{ kind: "context" | "remove" | "add"; text: string }>;
  /** `*** End of File`: the hunk ends at the end of the file. */
  atEnd: boolean;
}

/** The lines a hunk expects in the file: its context and removed lines, in order. */
function oldLines(hunk: PatchHunk): string[] {
  return hunk.lines.filter((l) => l.kind !== "add").map((l) => l.text);
}

export interface PatchChange {
  type: "add" | "update" | "delete";
  path: string;
  /** For an update with `*** Move to:`, the path the file had before. */
  from?: string;
  lines_before: number | null;
  lines_after: number | null;
}

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const EOF_MARK = "*** End of File";

function invalid(message: string): UsageError {
  return new UsageError("invalid_patch", `apply_patch: ${message}`);
}

/** Parse a patch in the envelope above; errors name the line. */
export function parsePatch(text: string): PatchOperation[] {
  const lines = text.replace(/\r\n?/g, "\n").trim().split("\n");
  if (lines[0]?.trim() !== BEGIN) throw invalid(`the patch must start with "${BEGIN}"`);
  if (lines[lines.length - 1]?.trim() !== END) throw invalid(`the patch must end with "${END}"`);
  const ops: PatchOperation[] = [];
  let i = 1;
  const last = lines.length - 1;
  const fileHeader = (line: string) => line.startsWith("*** ") && line !== EOF_MARK;
  while (i < last) {
    const line = lines[i]!;
    if (line.startsWith(ADD)) {
      const path = headerPath(line, ADD, i);
      const body: string[] = [];
      for (i++; i < last && !fileHeader(lines[i]!); i++) {
        if (!lines[i]!.startsWith("+"))
          throw invalid(`line ${i + 1}: every line of an added file starts with '+', got "${lines[i]}"`);
        body.push(lines[i]!.slice(1));
      }
      ops.push({ type: "add", path, lines: body });
    } else if (line.startsWith(DELETE)) {
      ops.push({ type: "delete", path: headerPath(line, DELETE, i) });
      i++;
    } else if (line.startsWith(UPDATE)) {
      const path = headerPath(line, UPDATE, i);
      i++;
      let moveTo: string | undefined;
      if (lines[i]?.startsWith(MOVE)) moveTo = headerPath(lines[i++]!, MOVE, i - 1);
      const hunks: PatchHunk[] = [];
      while (i < last && !fileHeader(lines[i]!)) {
        const hunk: PatchHunk = { lines: [], atEnd: false };
        const head = lines[i]!;
        if (head === "@@" || head.startsWith("@@ ")) {
          const anchor = head.slice(2).trim();
          if (anchor !== "") hunk.anchor = anchor;
          i++;
        } else if (hunks.length > 0) {
          throw invalid(`line ${i + 1}: expected a hunk starting with "@@", got "${head}"`);
        }
        for (; i < last && !fileHeader(lines[i]!) && lines[i] !== EOF_MARK && !lines[i]!.startsWith("@@"); i++) {
          const l = lines[i]!;
          // An empty line is taken as an empty context line (editors strip the lone space).
          const kind =
            l === "" || l[0] === " " ? "context" : l[0] === "-" ? "remove" : l[0] === "+" ? "add" : undefined;
          if (kind === undefined) throw invalid(`line ${i + 1}: a hunk line starts with ' ', '-' or '+', got "${l}"`);
          hunk.lines.push({ kind, text: l.slice(1) });
        }
        if (lines[i] === EOF_MARK) {
          hunk.atEnd = true;
          i++;
        }
        if (hunk.lines.length === 0) throw invalid(`line ${i}: a hunk of ${path} changes nothing`);
        hunks.push(hunk);
      }
      if (hunks.length === 0 && moveTo === undefined) throw invalid(`"${UPDATE}${path}" has no hunk`);
      ops.push({ type: "update", path, hunks, ...(moveTo !== undefined ? { moveTo } : {}) });
    } else {
      throw invalid(`line ${i + 1}: expected "${ADD}", "${UPDATE}" or "${DELETE}", got "${line}"`);
    }
  }
  if (ops.length === 0) throw invalid("the patch changes no file");
  return ops;
}

function headerPath(line: string, prefix: string, index: number): string {
  const path = line.slice(prefix.length).trim();
  if (path === "") throw invalid(`line ${index + 1}: "${prefix.trim()}" names no path`);
  return path;
}

/**
 * The file `path` names in the workspace, refused when it (or a link on the way) lies outside the
 * allowed paths: a link inside `docs/` must not lead the edit elsewhere.
 */
function editTarget(workspace: string, path: string, allowedPaths: readonly string[]): string {
  const refused = pathRefusal(path, allowedPaths);
  if (refused) throw new RefusedError("path_not_allowed", `apply_patch: ${refused}; nothing was changed`);
  const normal = posix.normalize(path);
  const target = confinePath(workspace, normal, "apply_patch path");
  // Resolve links on the way (the nearest existing ancestor); the real path must pass the same rule.
  let existing = target;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const root = realpathSync(workspace);
  const real = relative(root, realpathSync(existing));
  const realPath = posix.join(real.split(sep).join("/"), relative(existing, target).split(sep).join("/"));
  if (
    realPath !== normal &&
    (real.startsWith("..") || isAbsolute(real) || pathRefusal(realPath, allowedPaths) !== null)
  ) {
    throw new RefusedError(
      "path_not_allowed",
      `apply_patch: path "${path}" leads through a link to ${isAbsolute(real) || real.startsWith("..") ? realpathSync(existing) : realPath}, outside the allowed paths (${allowedPaths.join(", ")}); nothing was changed`,
    );
  }
  return target;
}

/** A file's text as lines, without the final newline's empty line. */
function toLines(text: string): string[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const MATCHERS: Array<(a: string, b: string) => boolean> = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
];

/** Where `needle` first occurs in `lines` from `start` (exact, then more leniently), or -1. */
function seek(lines: string[], needle: string[], start: number, atEnd: boolean): number {
  for (const same of MATCHERS) {
    const from = atEnd ? Math.max(start, lines.length - needle.length) : start;
    for (let at = from; at + needle.length <= lines.length; at++) {
      if (needle.every((n, k) => same(lines[at + k]!, n))) return at;
    }
  }
  return -1;
}

function applyHunks(path: string, before: string[], hunks: PatchHunk[]): string[] {
  const lines = [...before];
  let cursor = 0;
  hunks.forEach((hunk, n) => {
    if (hunk.anchor !== undefined) {
      const at = seek(lines, [hunk.anchor], cursor, false);
      if (at < 0)
        throw invalid(
          `${path}: hunk ${n + 1}'s "@@ ${hunk.anchor}" line is not in the file${cursor > 0 ? " after the previous hunk" : ""}; nothing was changed`,
        );
      cursor = at + 1;
    }
    const old = oldLines(hunk);
    const at =
      old.length === 0
        ? hunk.anchor !== undefined && !hunk.atEnd
          ? cursor
          : lines.length
        : seek(lines, old, cursor, hunk.atEnd);
    if (at < 0) {
      throw invalid(
        `${path}: hunk ${n + 1} does not match the file${cursor > 0 ? " after the previous hunk" : ""}; these lines were not found:\n${old.map((l) => `  ${l}`).join("\n")}\nRead the file again and send context lines as they are; nothing was changed`,
      );
    }
    // Context lines stay as the file has them (they may have matched ignoring whitespace).
    let k = at;
    const replacement: string[] = [];
    for (const l of hunk.lines) {
      if (l.kind === "context") replacement.push(lines[k++]!);
      else if (l.kind === "remove") k++;
      else replacement.push(l.text);
    }
    lines.splice(at, old.length, ...replacement);
    cursor = at + replacement.length;
  });
  return lines;
}

/**
 * Apply a patch to the workspace, confined to `allowedPaths`. All operations are checked first
 * (against the files as earlier operations of the same patch leave them); then written.
 */
export function applyPatch(workspace: string, text: string, allowedPaths: readonly string[]): PatchChange[] {
  const ops = parsePatch(text);
  // The files as the patch leaves them: path → text (null: deleted), in the order first touched.
  const files = new Map<string, { target: string; text: string | null }>();
  const current = (path: string): string | null => {
    const key = posix.normalize(path);
    if (files.has(key)) return files.get(key)!.text;
    const target = editTarget(workspace, path, allowedPaths);
    if (!existsSync(target)) return null;
    if (!lstatSync(target).isFile()) throw invalid(`${path} is not a regular file; nothing was changed`);
    return readFileSync(target, "utf8");
  };
  const set = (path: string, value: string | null) =>
    files.set(posix.normalize(path), { target: editTarget(workspace, path, allowedPaths), text: value });
  const changes: PatchChange[] = [];
  for (const op of ops) {
    const before = current(op.path);
    if (op.type === "add") {
      if (before !== null) throw invalid(`${op.path} already exists: use "${UPDATE}${op.path}"; nothing was changed`);
      set(op.path, op.lines.length === 0 ? "" : `${op.lines.join("\n")}\n`);
      changes.push({ type: "add", path: posix.normalize(op.path), lines_before: null, lines_after: op.lines.length });
    } else if (op.type === "delete") {
      if (before === null) throw invalid(`${op.path} does not exist, so it cannot be deleted; nothing was changed`);
      set(op.path, null);
      changes.push({
        type: "delete",
        path: posix.normalize(op.path),
        lines_before: toLines(before).length,
        lines_after: null,
      });
    } else {
      if (before === null)
        throw invalid(`${op.path} does not exist: use "${ADD}${op.path}" to create it; nothing was changed`);
      const after = applyHunks(op.path, toLines(before), op.hunks);
      const text = after.length === 0 ? "" : `${after.join("\n")}\n`;
      const from = posix.normalize(op.path);
      const dest = posix.normalize(op.moveTo ?? op.path);
      if (dest !== from) {
        if (current(dest) !== null)
          throw invalid(`cannot move ${op.path} to ${dest}: it already exists; nothing was changed`);
        set(op.path, null);
      }
      set(dest, text);
      changes.push({
        type: "update",
        path: dest,
        ...(dest !== from ? { from } : {}),
        lines_before: toLines(before).length,
        lines_after: after.length,
      });
    }
  }
  for (const { target, text } of files.values()) {
    if (text === null) {
      rmSync(target, { force: true });
    } else {
      writeFileAtomic(target, text);
    }
  }
  return changes;
}
