/**
 * The composition root: builds a project's supervisor from its config — the OA run gate, the
 * action executor and its handlers (forge or GitHub, notifiers, credentials), the action and
 * proposal sinks and the environment provider — so that the lattice knows its hooks only as
 * interfaces and imports neither oa nor prompt. `openProject` (project/) opens a project and builds
 * each of its objects on first use; the CLI, the server, the worker and the lane's demo take them from it.
 */
export {
  projectActionExecutor,
  projectCycles,
  projectForge,
  localForge,
  projectNotifiers,
  workspaceSandbox,
  type ProjectActionsOptions,
} from "./actions.js";
export { oaRunGate } from "./oa-gate.js";
export { projectEnvironmentChanges, projectSupervisor, type ProjectSupervisorOptions } from "./supervisor.js";
export * from "./project/index.js";
