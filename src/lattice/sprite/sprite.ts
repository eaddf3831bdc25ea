/**
 * `pmagent/sprite`: the TypeScript SDK for sprites. Every event is validated, appended (fsync'd)
 * to `$LATTICE_WORKSPACE/.lattice/outbox.jsonl`, then printed on stdout with the `LATTICE_EVENT `
 * prefix — outbox first, so an event the supervisor saw on stdout is always durable.
 *
 *   import { Sprite } from "pmagent/sprite";
 *   const sprite = new Sprite();               // LATTICE_SPRITE_ID, LATTICE_WORK_ITEM_ID, LATTICE_WORKSPACE
 *   const { resume, replayed } = sprite.readResume();
 *   sprite.phaseStarted("implement");
 *   sprite.waiting("PR_REVIEW", sprite.checkpoint(), { approved: "boolean" });
 *
 * Kept light (no store, no database client) so a sprite starts fast.
 */
import { formatZodIssues, nowIso, Redactor, secretsFromEnv, UsageError } from "../../core/index.js";
import { createCheckpoint, defaultCheckpointDir, type CreateResult } from "../checkpoint/index.js";
import {
  appendOutbox,
  latticeDir,
  outboxPath,
  EVENT_PREFIX,
  LatticeEventSchema,
  PAYLOAD_SCHEMAS,
  PROTOCOL_VERSION,
  type EventOf,
  type EventType,
  type PayloadInputOf,
  readResume,
  type ResumeInfo,
} from "../protocol/index.js";

export { checkInputs, assertInputs, type InputsCheckOptions } from "../protocol/index.js";
export { markResumed, readResume, type ResumeInfo } from "../protocol/index.js";
// The sprite side of the CLI (`pmagent emit|checkpoint|resume-info`) loads only this file, so a
// shell sprite's every event costs a small start-up, not the supervisor's whole dependency tree.
export { EVENT_TYPES, isEventType, PAYLOAD_SCHEMAS } from "../protocol/index.js";
export {
  createCheckpoint,
  defaultCheckpointDir,
  listCheckpoints,
  pruneCheckpoints,
  restoreCheckpoint,
} from "../checkpoint/index.js";
export type { EventOf, EventType, LatticeEvent, PayloadInputOf, Resume } from "../protocol/index.js";

export const DEFAULT_WORKSPACE = "/workspace";

export interface SpriteOptions {
  spriteId?: string;
  workItemId?: string;
  workspace?: string;
  /** Checkpoint directory (default: LATTICE_CHECKPOINT_DIR, else beside the workspace). */
  checkpointDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Where prefixed event lines go (default: process.stdout). */
  write?: (line: string) => void;
  /** Values never written into an event (besides secrets in `env`, such as an agent's model key). */
  secrets?: string[];
  clock?: () => number;
}

/** Identity and channels of a sprite, from its environment (or explicit options). */
export function spriteContext(options: SpriteOptions = {}): {
  spriteId: string;
  workItemId: string;
  workspace: string;
  checkpointDir: string;
} {
  const env = options.env ?? process.env;
  const spriteId = options.spriteId ?? env.LATTICE_SPRITE_ID;
  const workItemId = options.workItemId ?? env.LATTICE_WORK_ITEM_ID;
  if (!spriteId)
    throw new UsageError(
      "sprite_id_missing",
      "LATTICE_SPRITE_ID is not set: the supervisor sets it when it starts a sprite (set it yourself to run a sprite by hand)",
    );
  if (!workItemId)
    throw new UsageError(
      "work_item_id_missing",
      "LATTICE_WORK_ITEM_ID is not set: the supervisor sets it when it starts a sprite (set it yourself to run a sprite by hand)",
    );
  const workspace = options.workspace ?? (env.LATTICE_WORKSPACE || DEFAULT_WORKSPACE);
  return {
    spriteId,
    workItemId,
    workspace,
    checkpointDir: options.checkpointDir ?? defaultCheckpointDir(workspace, env),
  };
}

export class Sprite {
  readonly spriteId: string;
  readonly workItemId: string;
  readonly workspace: string;
  readonly checkpointDir: string;
  private readonly write: (line: string) => void;
  private readonly clock: () => number;
  /** Null when there is nothing to redact (the usual scrubbed sprite environment). */
  readonly redactor: Redactor | null;

  constructor(options: SpriteOptions = {}) {
    const ctx = spriteContext(options);
    this.spriteId = ctx.spriteId;
    this.workItemId = ctx.workItemId;
    this.workspace = ctx.workspace;
    this.checkpointDir = ctx.checkpointDir;
    this.write = options.write ?? ((line) => process.stdout.write(line));
    this.clock = options.clock ?? Date.now;
    // The outbox is a file in the workspace: a secret in this process's environment (an agent's
    // model key reaches the commands the agent runs) never lands in it, whatever the event says.
    const secrets = [...secretsFromEnv(options.env ?? process.env), ...(options.secrets ?? [])];
    this.redactor = secrets.length > 0 ? new Redactor(secrets) : null;
  }

  get latticeDir(): string {
    return latticeDir(this.workspace);
  }

  get outboxPath(): string {
    return outboxPath(this.workspace);
  }

  /** Validate, append to the outbox, print. Throws a usage error naming the bad payload field. */
  emit<T extends EventType>(type: T, payload: PayloadInputOf<T>): EventOf<T> {
    const checked = PAYLOAD_SCHEMAS[type].safeParse(payload);
    if (!checked.success) {
      const issues = formatZodIssues(checked.error).map((i) => i.replace(/^\$/, "payload"));
      throw new UsageError("invalid_event", `${type} event is invalid:\n  ${issues.join("\n  ")}`, { issues });
    }
    const event = {
      protocol_version: PROTOCOL_VERSION,
      event_type: type,
      sprite_id: this.spriteId,
      work_item_id: this.workItemId,
      timestamp: nowIso(this.clock),
      payload: this.redactor ? this.redactor.redactValue(checked.data) : checked.data,
    };
    // The envelope (ids, timestamp) is checked too, so a bad LATTICE_SPRITE_ID fails here, not at the supervisor.
    const whole = LatticeEventSchema.safeParse(event);
    if (!whole.success)
      throw new UsageError(
        "invalid_event",
        `${type} event is invalid:\n  ${formatZodIssues(whole.error).join("\n  ")}`,
      );
    appendOutbox(this.outboxPath, event);
    this.write(`${EVENT_PREFIX}${JSON.stringify(event)}\n`);
    return whole.data as EventOf<T>;
  }

  info(message: string, options: { kind?: string; metadata?: Record<string, unknown> } = {}): EventOf<"INFO"> {
    return this.emit("INFO", { message, ...options });
  }

  phaseStarted(phase: string): EventOf<"PHASE_STARTED"> {
    return this.emit("PHASE_STARTED", { phase });
  }

  phaseFinished(phase: string, success: boolean): EventOf<"PHASE_FINISHED"> {
    return this.emit("PHASE_FINISHED", { phase, success });
  }

  /** Ask Lattice to act. A blocking request must be followed by `checkpoint()` and `waiting()`. */
  actionRequest(
    action: string,
    parameters: Record<string, unknown> = {},
    options: { blocking?: boolean } = {},
  ): EventOf<"ACTION_REQUEST"> {
    return this.emit("ACTION_REQUEST", { action, parameters, blocking: options.blocking ?? false });
  }

  artifact(
    kind: string,
    options: { ref?: string | null; url?: string | null; metadata?: Record<string, unknown> } = {},
  ): EventOf<"ARTIFACT"> {
    return this.emit("ARTIFACT", { kind, ...options });
  }

  /** Declare the pause. Stop working after this: Lattice restores the checkpoint and resumes you. */
  waiting(reason: string, checkpointId: string, expectedInputs?: Record<string, string>): EventOf<"WAITING"> {
    return this.emit(
      "WAITING",
      expectedInputs === undefined
        ? { reason, checkpoint_id: checkpointId }
        : { reason, checkpoint_id: checkpointId, expected_inputs: expectedInputs },
    );
  }

  /** `outcome` (e.g. `approved`, `changes_requested`) picks the lane's next step when the role routes on it (config `on_outcome`). */
  completed(status: "success" | "failure", summary?: string, outcome?: string): EventOf<"COMPLETED"> {
    return this.emit("COMPLETED", {
      status,
      ...(summary === undefined ? {} : { summary }),
      ...(outcome === undefined ? {} : { outcome }),
    });
  }

  error(message: string, details?: Record<string, unknown>): EventOf<"ERROR"> {
    return this.emit("ERROR", details === undefined ? { message } : { message, details });
  }

  environmentProposal(payload: PayloadInputOf<"ENVIRONMENT_PROPOSAL">): EventOf<"ENVIRONMENT_PROPOSAL"> {
    return this.emit("ENVIRONMENT_PROPOSAL", payload);
  }

  /** Snapshot the workspace (without `.lattice/`) and return the checkpoint id for WAITING. */
  checkpoint(): string {
    return this.checkpointDetails().id;
  }

  checkpointDetails(): CreateResult {
    return createCheckpoint(this.workspace, this.checkpointDir);
  }

  /**
   * Read `.lattice/resume.json`. `resume` is null on a first start; `replayed` is true when this
   * same resume was already processed (treat it as a no-op). See `readResume` in resume.ts for `mark`.
   */
  readResume(options: { mark?: boolean } = {}): ResumeInfo {
    return readResume(this.workspace, options);
  }
}
