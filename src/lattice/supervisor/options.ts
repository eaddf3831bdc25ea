/** The supervisor's public option and result types: how it is built, how a run is started and resumed. */
import type { Redactor, Logger } from "../../core/index.js";
import type { Project } from "../../config/index.js";
import type { Store } from "../../store/index.js";
import type { SupervisorHooks } from "./hooks.js";
import type { GateDecision, RunBudget, RunRecord, StoredEvent } from "../runs/index.js";
import type { CycleRepoOptions, Forge } from "../../forge/index.js";

export interface SupervisorOptions {
  store: Store;
  project: Project;
  hooks?: SupervisorHooks;
  /** The supervisor's environment: the allow-list reads from it, its secret values are redacted. */
  env?: NodeJS.ProcessEnv;
  redactor?: Redactor;
  /** How a sprite runs pmagent (`pmagent emit`, `pmagent checkpoint`); default: this process's CLI. */
  pmagentCommand?: string[];
  logCapBytes?: number;
  /** Outbox and output polling interval while a sprite runs. */
  pollMs?: number;
  leaseMs?: number;
  host?: string;
  clock?: () => number;
  logger?: Logger;
  /** Live view of newly stored events (console, SSE). */
  onEvents?: (run: RunRecord, events: StoredEvent[]) => void;
  /**
   * Lane cycles as branches: where they live and the forge their pull requests open on. Without
   * it, each run's workspace is a clone of the project and its changes stay there.
   */
  cycles?: CycleRepoOptions & { forge: Forge };
}

export interface StartRunOptions {
  role: string;
  entryId?: string;
  /** The sprite's argv; default: the role's configured runner command. */
  command?: string[];
  /** Relative to the project root; default `.pmagent/workspaces/<run id>`. */
  workspace?: string;
  /** The worker holding the entry's claim (heartbeats, refused transitions after a takeover). */
  worker?: string;
  /** A gate decision already made for this entry (the worker asks before claiming). */
  decided?: GateDecision;
  timeoutS?: number;
  /** This run's own limits, in place of its role's budget where given. */
  budget?: RunBudget;
  /** Called with the run id as soon as the run is recorded. */
  onStarted?: (runId: string) => void;
}

export interface ResumeOptions {
  inputs: Record<string, unknown>;
  context?: Record<string, unknown>;
  /** A person's follow-up message to the sprite, beside the inputs: it goes in the resume's `context.message`. */
  message?: string;
  /** Written into resume.json's `inputs` (mode 0600) but never stored in the database or logs. */
  secretInputs?: Record<string, string>;
  /** A blocking action failed: resume with the error in `context.error`, inputs unchecked. */
  failure?: { action: string; message: string };
  /**
   * The inputs are a blocking action's result: keys `expected_inputs` does not name are allowed,
   * and when the result does not satisfy `expected_inputs` (the sprite waits for a person, as in
   * the spec's PR_REVIEW) the run keeps waiting and `context` is held for the person's resume.
   */
  fromAction?: boolean;
  /** Carrying out a queued resume (`queueResume`): its row goes in the claim, or another worker had it. */
  queued?: boolean;
}

export interface ResumeResult {
  run: RunRecord;
  /** True when this exact resume was done before: nothing happened. */
  noop: boolean;
  /** True when an action's result was held for a person's resume instead (see `fromAction`): the run still waits. */
  held?: boolean;
  /** Settles when the relaunched sprite has finished (and its follow-ups are done). */
  finished: Promise<RunRecord>;
}
