/**
 * The sprite's side of resume: read `.lattice/resume.json` and tell a first resume from a replay.
 * A resume is identified by the hash of its canonical JSON (same checkpoint and payload ⇒ same
 * key); keys already processed are listed, one a line, in the marker file `.lattice/resumed`.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  contentHash,
  jsonTooDeep,
  parseWith,
  PmagentError,
  tooDeepMessage,
  UsageError,
  writeFileAtomic,
} from "../../core/index.js";
import { LATTICE_DIR } from "../wire/index.js";
import { jsonErrorMessage } from "./parser.js";
import { ResumeSchema, type Resume, type ResumeInput } from "./events.js";
import { assertRealDirectory, openRegularFile } from "../wire/index.js";

export const RESUME_FILE = "resume.json";
export const RESUMED_MARKER = "resumed";

export function resumePath(workspace: string): string {
  return join(workspace, LATTICE_DIR, RESUME_FILE);
}

export function resumedMarkerPath(workspace: string): string {
  return join(workspace, LATTICE_DIR, RESUMED_MARKER);
}

export interface ResumeInfo {
  /** The resume payload, or null when the sprite was not resumed (no resume.json). */
  resume: Resume | null;
  /** True when this exact resume (checkpoint and payload) was already processed: treat it as a no-op. */
  replayed: boolean;
  /** Identity of the resume (hash of its canonical JSON), null without a resume. */
  key: string | null;
}

function readText(path: string): string | null {
  let fd: number | null;
  try {
    fd = openRegularFile(path, "the resume file", { parent: true });
  } catch (err) {
    throw err instanceof PmagentError ? new UsageError("invalid_resume", err.message, { path }) : err;
  }
  if (fd === null) return null;
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

function processedKeys(workspace: string): Set<string> {
  const text = readText(resumedMarkerPath(workspace));
  return new Set((text ?? "").split("\n").filter((l) => l.length > 0));
}

/** Record a resume as processed, so that reading the same resume again reports a replay. */
export function markResumed(workspace: string, key: string): void {
  const path = resumedMarkerPath(workspace);
  if (processedKeys(workspace).has(key)) return;
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, "a", 0o600);
  try {
    writeSync(fd, `${key}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Read the resume file of `workspace`. With `mark` (the default) a first resume is recorded as
 * processed at once, so a second read — or a relaunch with the same resume — reports `replayed`.
 * Pass `mark: false` to look without recording, then call `markResumed` when the work is done.
 */
export function readResume(workspace: string, options: { mark?: boolean } = {}): ResumeInfo {
  const path = resumePath(workspace);
  const text = readText(path);
  if (text === null) return { resume: null, replayed: false, key: null };
  if (jsonTooDeep(text)) throw new UsageError("invalid_resume", `${path} ${tooDeepMessage()}`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    // Without V8's excerpt of the text: resume.json may carry a credential.
    throw new UsageError("invalid_resume", `${path} is not valid JSON: ${jsonErrorMessage(err)}`);
  }
  const resume = parseWith(ResumeSchema, raw, path, "invalid_resume");
  const key = contentHash(raw);
  const replayed = processedKeys(workspace).has(key);
  if (!replayed && options.mark !== false) markResumed(workspace, key);
  return { resume, replayed, key };
}

/**
 * The supervisor's side: write `.lattice/resume.json` (validated, atomically, mode 0600 because
 * FETCH_CREDENTIAL results travel in it). Returns the resume's key, as `readResume` will see it.
 */
export function writeResume(workspace: string, resume: ResumeInput): string {
  const value = parseWith(ResumeSchema, resume, "resume payload", "invalid_resume");
  assertRealDirectory(dirname(resumePath(workspace)), "the directory of the resume file");
  writeFileAtomic(resumePath(workspace), `${JSON.stringify(value)}\n`, 0o600);
  return contentHash(value);
}

/**
 * The supervisor's side, once the sprite has read a resume that carried a credential: remove
 * resume.json so the value is not left in the workspace (the `resumed` marker keeps the key).
 */
export function removeResume(workspace: string): void {
  rmSync(resumePath(workspace), { force: true });
}

/** The longest follow-up message a resume carries. */
export const FOLLOW_UP_MAX_CHARS = 20_000;

/**
 * pmagent's extension of the resume payload: a person's follow-up message to a waiting sprite
 * travels in the resume's `context.message` (the spec's free-form context), beside the typed
 * inputs. Returns the context with the message in it; refuses an empty or overlong message, and
 * a message given twice (as the message and in the context).
 */
export function withFollowUp(
  context: Record<string, unknown> | undefined,
  message: string | undefined,
): Record<string, unknown> | undefined {
  if (message === undefined) return context;
  if (message.trim() === "")
    throw new UsageError(
      "resume_message_empty",
      "the follow-up message is empty: write what the agent should be told, or give no message",
    );
  if (message.length > FOLLOW_UP_MAX_CHARS) {
    throw new UsageError(
      "resume_message_too_long",
      `the follow-up message has ${message.length} characters, over the limit of ${FOLLOW_UP_MAX_CHARS}: shorten it, or put the long text in a file of the workspace and say where`,
    );
  }
  if (context && "message" in context)
    throw new UsageError(
      "resume_message_twice",
      "the follow-up message is given both as the message and as context.message: give it once",
    );
  return { ...context, message };
}

/** The follow-up message a resume carries (see withFollowUp), or null. */
export function followUpOf(resume: { context?: Record<string, unknown> }): string | null {
  const m = resume.context?.message;
  return typeof m === "string" && m.trim() !== "" ? m : null;
}
