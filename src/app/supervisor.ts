/**
 * The supervisor's hooks, wired to this module: ACTION_REQUESTs go to the action executor,
 * ENVIRONMENT_PROPOSALs to the proposal store, and accepted proposals become a role's
 * environment before each launch.
 */
import { createLogger, hasCode, type Logger } from "../core/index.js";
import {
  type ActionExecutor,
  type ActionResume,
  type ActionSink,
  type ProposalSink,
  type RunEnvironmentProvider,
  type Notifier,
  EnvironmentChanges,
  ProposalStore,
  hiddenFromSprites,
  roleEnvironment,
  projectRedactor,
  ActionRequestPayload,
  EnvironmentProposalPayload,
  Supervisor,
  type SupervisorOptions,
  type RunRecord,
} from "../lattice/index.js";
import { projectActionExecutor, projectCycles, projectForge, projectNotifiers } from "./actions.js";
import type { Forge } from "../forge/index.js";
import { oaRunGate } from "./oa-gate.js";
import type { Project } from "../config/index.js";
import type { Store } from "../store/index.js";

export function actionSink(executor: ActionExecutor): ActionSink {
  return {
    async onActionRequest({ run, event }) {
      const payload = ActionRequestPayload.parse(event.event.payload);
      const record = await executor.submit({
        projectId: run.project_id,
        runId: run.id,
        eventHash: event.id,
        role: run.role,
        workItemId: run.work_item_id,
        workspace: run.workspace,
        action: payload.action,
        parameters: payload.parameters,
        blocking: payload.blocking,
      });
      return {
        status: record.state,
        idempotency_key: record.idempotency_key,
        attempts: record.attempts,
        ...(record.error ? { error: record.error } : {}),
      };
    },
    async orphaned(projectId) {
      return (await executor.actions.orphaned(projectId)).map((a) => ({ run_id: a.run_id, event_id: a.event_hash }));
    },
  };
}

export function proposalSink(
  proposals: ProposalStore,
  notifiers: readonly Notifier[],
  changes: EnvironmentChanges,
): ProposalSink {
  return {
    async onEnvironmentProposal({ run, event }) {
      const payload = EnvironmentProposalPayload.parse(event.event.payload);
      const { proposal, first, counted } = await proposals.record(run.role, run.id, event.id, payload);
      // escalate_to_human asks for a person: the humans hear of it the first time it is proposed.
      if (first && counted && proposal.adjustment_type === "escalate_to_human") {
        const reason = typeof proposal.details.reason === "string" ? `: ${proposal.details.reason}` : "";
        for (const n of notifiers) {
          await n.notify({
            message: `${run.role} asks for a human (${proposal.observed_failure.phase}, exit ${proposal.observed_failure.exit_code})${reason}; see \`pmagent env list\` (${proposal.id})`,
            level: "warning",
            title: "environment escalation",
            project_id: run.project_id,
            run_id: run.id,
            role: run.role,
            work_item_id: run.work_item_id,
            idempotency_key: `${run.id}:${event.id}`,
          });
        }
      }
      // Recorded either way (the humans see it, and `env show` says why), but one that cannot be accepted (a path or an option for a name, its own workspace's file) says so now.
      const refused = proposal.status === "pending" ? changes.plan(proposal).refused : null;
      return {
        status: "recorded",
        proposal_id: proposal.id,
        count: proposal.count,
        proposal_status: proposal.status,
        ...(refused ? { refused } : {}),
      };
    },
  };
}

export function environmentProvider(proposals: ProposalStore, changes?: EnvironmentChanges): RunEnvironmentProvider {
  return {
    async adjustmentsFor(role) {
      const env = await roleEnvironment(proposals, role, changes);
      return {
        preinstall: env.preinstall.map((s) => s.command),
        env: env.env,
        path: env.path,
        ...(env.network ? { network: env.network } : {}),
      };
    },
  };
}

/**
 * A project's environment changes (accepting a proposal applies it), over its proposal store: its
 * installers run in the project's sandbox, seeing no more than its sprites do.
 */
export function projectEnvironmentChanges(
  project: Project,
  store: Store,
  proposals?: ProposalStore,
  env: NodeJS.ProcessEnv = process.env,
): EnvironmentChanges {
  const c = project.config;
  const storeFile = store.dialect === "sqlite" ? store.location : null;
  return new EnvironmentChanges({
    store,
    proposals: proposals ?? new ProposalStore({ store, projectId: c.project_id, humans: c.humans }),
    projectId: c.project_id,
    root: project.root,
    env,
    sandbox: c.sandbox,
    hidden: hiddenFromSprites(project, storeFile, env.HOME),
  });
}

/**
 * Resume a sprite blocked on an action. A run that no longer waits (it ended, or was canceled)
 * has nobody to resume. A result that does not satisfy the WAITING event's expected_inputs (the
 * sprite waits for a person: the spec's PR_REVIEW after OPEN_PR) is held on the run for the
 * person's resume, and the humans are told the run waits for them.
 */
async function resumeBlocked(
  supervisor: Supervisor,
  runId: string,
  payload: ActionResume,
  log: Logger,
  notifiers: readonly Notifier[],
): Promise<void> {
  try {
    const result = await supervisor.resumeRun(runId, { ...payload, fromAction: true });
    if (result.held && result.run.waiting) await tellWaiting(result.run, payload, notifiers);
  } catch (err) {
    if (hasCode(err, "run_not_waiting")) {
      log.warn(
        { run: runId, action: payload.context?.action },
        "action finished but its run is not waiting: nothing to resume",
      );
      return;
    }
    throw err;
  }
}

async function tellWaiting(run: RunRecord, payload: ActionResume, notifiers: readonly Notifier[]): Promise<void> {
  const waiting = run.waiting!;
  const action = payload.context?.action as { action?: string; idempotency_key?: string } | undefined;
  const needs = Object.entries(waiting.expected_inputs)
    .map(([k, t]) => `${k}: ${t}`)
    .join(", ");
  for (const n of notifiers) {
    await n.notify({
      message: `run ${run.id} waits (${waiting.reason}) for inputs ${needs}; ${action?.action ?? "the action"} is done and its result goes with the resume: pmagent resume ${run.id} --input NAME=VALUE`,
      level: "info",
      title: "waiting for a person",
      project_id: run.project_id,
      run_id: run.id,
      role: run.role,
      work_item_id: run.work_item_id,
      idempotency_key: `${run.id}:${waiting.event_id}:${action?.idempotency_key ?? "held"}`,
    });
  }
}

export interface ProjectSupervisorOptions extends Omit<SupervisorOptions, "hooks"> {
  /** Console notifications (default stderr). */
  consoleWrite?: (line: string) => void;
  /** Default: OA's SafeOPSDecision (when the project has OA surfaces). */
  gate?: NonNullable<SupervisorOptions["hooks"]>["gate"];
  /** The project's proposal store and forge (default: built here); openProject passes its own. */
  proposals?: ProposalStore;
  forge?: Forge;
}

/** A supervisor whose actions, proposals and role environments are this module's. */
export function projectSupervisor(options: ProjectSupervisorOptions): Supervisor {
  const { project, store } = options;
  const env = options.env ?? process.env;
  const redactor = options.redactor ?? projectRedactor(project, env);
  const log = options.logger ?? createLogger("pmagent-lattice", redactor);
  const { proposals: given, forge: givenForge, ...supervisorOptions } = options;
  const proposals =
    given ?? new ProposalStore({ store, projectId: project.config.project_id, humans: project.config.humans });
  // One forge for OPEN_PR and the lane cycles.
  const forge = givenForge ?? projectForge(project, store, env);
  // The executor resumes through the supervisor it is a hook of (called only once both exist).
  const notifiers = projectNotifiers(project, redactor, options.consoleWrite);
  const executor = projectActionExecutor({
    project,
    store,
    env,
    logger: log,
    redactor,
    forge,
    consoleWrite: options.consoleWrite,
    resume: (runId, payload) => resumeBlocked(supervisor, runId, payload, log, notifiers),
  });
  const changes = projectEnvironmentChanges(project, store, proposals, env);
  const supervisor: Supervisor = new Supervisor({
    // Lane cycles are branches of the project's forge repository (the local forge's bare one).
    cycles: projectCycles(project, store, env, forge),
    ...supervisorOptions,
    // The same redactor (the secrets file's values too) and log as its sinks'.
    redactor,
    logger: log,
    hooks: {
      actions: actionSink(executor),
      proposals: proposalSink(proposals, notifiers, changes),
      environment: environmentProvider(proposals, changes),
      gate: options.gate ?? oaRunGate(project, env),
    },
  });
  return supervisor;
}
