/**
 * Wires an ActionExecutor into a Supervisor: each ACTION_REQUEST the supervisor stores is carried
 * out by the executor, and a blocking one resumes the waiting sprite (a failed action resumes it
 * with the error in `context.error`).
 */
import type { ActionExecutor } from "./action-executor.js";
import { projectActionExecutor, type ProjectActionsOptions } from "./action-setup.js";
import type { ActionSink } from "./hooks.js";
import { Supervisor, type SupervisorOptions } from "./supervisor.js";

export function executorSink(executor: ActionExecutor, projectId: string): ActionSink {
  return {
    async onActionRequest({ run, event }) {
      const p = event.event.payload as { action: string; parameters?: Record<string, unknown>; blocking?: boolean };
      const record = await executor.submit({
        projectId,
        runId: run.id,
        eventHash: event.id,
        role: run.role,
        workItemId: run.work_item_id,
        workspace: run.workspace,
        action: p.action,
        parameters: p.parameters ?? {},
        blocking: p.blocking === true,
      });
      return { status: record.state, idempotency_key: record.idempotency_key, ...(record.error ? { error: record.error.message } : {}) };
    },
  };
}

/** A supervisor of a project whose actions (OPEN_PR, POST_COMMENT, …) are carried out for real. */
export function projectSupervisor(options: SupervisorOptions & { actions?: Partial<Omit<ProjectActionsOptions, "project" | "store" | "resume">> }): Supervisor {
  const { actions, ...rest } = options;
  const executor = projectActionExecutor({
    ...actions,
    project: options.project,
    store: options.store,
    env: actions?.env ?? options.env,
    resume: async (runId, payload) => {
      const action = payload.context?.action as { action?: string; error?: { message?: string } | null } | undefined;
      if (action?.error) await supervisor.resumeRun(runId, { inputs: {}, failure: { action: String(action.action), message: action.error.message ?? "the action failed" } });
      else await supervisor.resumeRun(runId, { inputs: payload.inputs, context: payload.context, ...(payload.secretInputs ? { secretInputs: payload.secretInputs as Record<string, string> } : {}) });
    },
  });
  const supervisor: Supervisor = new Supervisor({ ...rest, hooks: { ...rest.hooks, actions: executorSink(executor, options.project.config.project_id) } });
  return supervisor;
}
