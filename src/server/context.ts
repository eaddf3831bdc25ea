import { Blackboard, BoardFeed } from "../blackboard/index.js";
import type { Project } from "../config/index.js";
import type { Logger, Redactor } from "../core/index.js";
import { projectKaiSources, type KaiSources } from "../kai/index.js";
import { ActionStore, ProposalStore, projectRedactor, type EnvironmentChanges, type EnvironmentProposal, type InstallPlan, type Supervisor } from "../lattice/index.js";
import { LocalForge } from "../forge/index.js";
import { projectEnvironmentChanges, projectSupervisor, type ProjectSupervisorOptions } from "../app/index.js";
import { oaWorkspace, type OAWorkspace } from "../oa/index.js";
import type { Store } from "../store/index.js";

/** Everything a route or MCP tool reaches, built once per server from the project and its store. */
export interface ServerContext {
  project: Project;
  store: Store;
  board: Blackboard;
  /** The live board every `/v1/entries/stream` client watches, from one poller. */
  boardFeed: BoardFeed;
  supervisor: Supervisor;
  proposals: ProposalStore;
  /** Accepting a proposal applies it here (installs its tools); changes are undone here. */
  envChanges: EnvironmentChanges;
  forge: LocalForge;
  actions: ActionStore;
  oa: OAWorkspace;
  kai: KaiSources;
  /** Redacts configured secrets and tokens from every response body. */
  redactor: Redactor;
  /** Sprites this server relaunched (resume): awaited on close so none outlives the store. */
  inFlight: Set<Promise<unknown>>;
}

export function serverContext(project: Project, store: Store, options: { env?: NodeJS.ProcessEnv; tokens?: Iterable<string>; logger?: Logger; supervisor?: Partial<ProjectSupervisorOptions> } = {}): ServerContext {
  const env = options.env ?? process.env;
  const c = project.config;
  const board = new Blackboard(store, { projectId: c.project_id, humans: c.humans });
  const redactor = projectRedactor(project, env, options.tokens ?? []);
  const proposals = new ProposalStore({ store, projectId: c.project_id, humans: c.humans });
  return {
    project,
    store,
    board,
    boardFeed: new BoardFeed(board),
    // The same supervisor as the CLI's: actions, proposals, role environments and the OA gate wired in.
    supervisor: projectSupervisor({ store, project, env, redactor, ...(options.logger ? { logger: options.logger } : {}), ...options.supervisor }),
    proposals,
    envChanges: projectEnvironmentChanges(project, store, proposals, env),
    forge: new LocalForge({ store, projectId: c.project_id, root: project.root, bareRepo: c.forge.bare_repo, remote: c.forge.remote }),
    actions: new ActionStore(store, redactor),
    oa: oaWorkspace(project.root, c.oa),
    kai: projectKaiSources(project, store),
    redactor,
    inFlight: new Set(),
  };
}

/** A proposal with what accepting it runs, where and how, or why it is refused (pending ones; null once decided). */
export function withPlan(ctx: ServerContext, p: EnvironmentProposal): EnvironmentProposal & { plan: InstallPlan | null } {
  return { ...p, plan: p.status === "pending" ? ctx.envChanges.plan(p) : null };
}
