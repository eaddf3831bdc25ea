import { BoardFeed, type Blackboard } from "../blackboard/index.js";
import type { Project } from "../config/index.js";
import type { Redactor } from "../core/index.js";
import type { KaiSources } from "../kai/index.js";
import type {
  ActionStore,
  ProposalStore,
  EnvironmentChange,
  EnvironmentChanges,
  EnvironmentProposal,
  InstallPlan,
  Supervisor,
} from "../lattice/index.js";
import type { LocalForge, PullComments } from "../forge/index.js";
import type { OpenProject, ProjectSupervisorOptions } from "../app/index.js";
import { oaWorkspace, type OAWorkspace } from "../oa/index.js";
import type { Store } from "../store/index.js";
import { HostedWorkers } from "./workers.js";

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
  /** Review comments on the local forge's pull requests. */
  pullComments: PullComments;
  actions: ActionStore;
  oa: OAWorkspace;
  kai: KaiSources;
  /** Redacts configured secrets and tokens from every response body. */
  redactor: Redactor;
  /** Sprites this server relaunched (resume): awaited on close so none outlives the store. */
  inFlight: Set<Promise<unknown>>;
  /** The workers this server hosts, on its one supervisor: stopped on close. */
  workers: HostedWorkers;
}

/**
 * The server's objects, taken from the opened project (open it with the server's bearer tokens as
 * secrets, so they are redacted too).
 */
export async function serverContext(
  opened: OpenProject,
  options: { supervisor?: Partial<ProjectSupervisorOptions> } = {},
): Promise<ServerContext> {
  const board = await opened.board();
  const supervisor = await opened.supervisor(options.supervisor);
  return {
    project: opened.project,
    store: opened.store,
    board,
    boardFeed: new BoardFeed(board),
    // The same supervisor as the CLI's: actions, proposals, role environments and the OA gate wired in.
    supervisor,
    proposals: await opened.proposals(),
    envChanges: await opened.environmentChanges(),
    forge: await opened.localForge(),
    pullComments: await opened.pullComments(),
    actions: await opened.actions(),
    oa: oaWorkspace(opened.root, opened.config.oa),
    kai: await opened.kaiSources(),
    redactor: await opened.redactor(),
    inFlight: new Set(),
    workers: new HostedWorkers({ project: opened.project, supervisor }),
  };
}

/**
 * Proposals as a person decides them: a pending one with what accepting it runs, where and how, or
 * why it is refused; an accepted one with the change it made (applied, failed or undone), so it can be undone.
 */
export async function describeProposals(
  ctx: ServerContext,
  proposals: readonly EnvironmentProposal[],
): Promise<Array<EnvironmentProposal & { plan: InstallPlan | null; change: EnvironmentChange | null }>> {
  const changes = await ctx.envChanges.forProposals(proposals.filter((p) => p.status === "accepted").map((p) => p.id));
  return proposals.map((p) => ({
    ...p,
    plan: p.status === "pending" ? ctx.envChanges.plan(p) : null,
    change: changes.get(p.id) ?? null,
  }));
}
