/**
 * One place that opens a project: its config and store, and the objects over them (board, runs,
 * actions, proposals, forge, environment changes, supervisor, Kai's sources). Each object is built
 * once, on first use, and its module is loaded only then: `pmagent bb list` loads the blackboard
 * and nothing of lattice, the supervisor, OA or the model client. The CLI, the server and the
 * lane's demo take what they need from it; lower modules (kai, lattice) are handed the objects.
 */
import type { Blackboard } from "../../blackboard/light/index.js";
import { openConfig, type Config, type Project } from "../../config/light/index.js";
import { confinePath, type Logger, type Redactor } from "../../core/index.js";
import type { Forge, LocalForge, PullComments } from "../../forge/index.js";
import type { KaiSources, RunReaders } from "../../kai/index.js";
import type { ActionStore, EnvironmentChanges, ProposalStore, RunStore, Supervisor } from "../../lattice/index.js";
import { openStore, type OpenStoreOptions, type Store } from "../../store/index.js";
import type { ProjectSupervisorOptions } from "../supervisor.js";
import { migrations } from "./migrations.js";

export interface OpenProjectOptions {
  /** The project, already loaded (default: the config found from `cwd`, or `configPath`). */
  project?: Project;
  configPath?: string;
  cwd?: string;
  /** A store already open: borrowed, so `close()` leaves it open (default: the project's, opened here). */
  store?: Store;
  /** How the store opens when it is opened here (a server yields while SQLite is busy). */
  storeOptions?: Pick<OpenStoreOptions, "yieldWhileBusy" | "env">;
  env?: NodeJS.ProcessEnv;
  /** More values to redact (a server's bearer tokens). */
  secrets?: Iterable<string>;
  /** The supervisor's log (default: its own, redacted). */
  logger?: Logger;
}

export interface KaiSourcesOptions {
  /** The repository to read git history and the STATE document from (default: the project's root). */
  repo?: string;
}

export class OpenProject {
  private readonly made = new Map<string, Promise<unknown>>();

  constructor(
    readonly project: Project,
    readonly store: Store,
    readonly env: NodeJS.ProcessEnv,
    private readonly options: { ownsStore: boolean; secrets: readonly string[]; logger?: Logger },
  ) {}

  get config(): Config {
    return this.project.config;
  }

  get root(): string {
    return this.project.root;
  }

  /** Built once: concurrent first uses share one promise. */
  private once<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.made.get(key) as Promise<T> | undefined;
    if (p === undefined) this.made.set(key, (p = make()));
    return p;
  }

  /** The project's blackboard, or another project's in the same store (a board issue may hold several). */
  board(projectId: string = this.config.project_id): Promise<Blackboard> {
    return this.once(
      `board:${projectId}`,
      async () =>
        new (await import("../../blackboard/light/index.js")).Blackboard(this.store, {
          projectId,
          humans: this.config.humans,
        }),
    );
  }

  /** Redacts the configured secrets (env and the secrets file) and any given at open. */
  redactor(): Promise<Redactor> {
    return this.once("redactor", async () =>
      (await import("../../lattice/actions/index.js")).projectRedactor(this.project, this.env, this.options.secrets),
    );
  }

  /** The project's runs, or another project's in the same store. */
  runs(projectId: string = this.config.project_id): Promise<RunStore> {
    return this.once(
      `runs:${projectId}`,
      async () => new (await import("../../lattice/runs/index.js")).RunStore(this.store, projectId),
    );
  }

  actions(): Promise<ActionStore> {
    return this.once(
      "actions",
      async () => new (await import("../../lattice/actions/index.js")).ActionStore(this.store, await this.redactor()),
    );
  }

  /** The project's environment proposals, or another project's in the same store. */
  proposals(projectId: string = this.config.project_id): Promise<ProposalStore> {
    return this.once(
      `proposals:${projectId}`,
      async () =>
        new (await import("../../lattice/environment/index.js")).ProposalStore({
          store: this.store,
          projectId,
          humans: this.config.humans,
        }),
    );
  }

  /**
   * The local forge (its pull requests table and bare repository), whatever forge OPEN_PR uses; or
   * another project's pull requests in the same forge (numbered per project).
   */
  localForge(projectId: string = this.config.project_id): Promise<LocalForge> {
    return this.once(`localForge:${projectId}`, async () =>
      (await import("../actions.js")).localForge(
        projectId === this.config.project_id
          ? this.project
          : { ...this.project, config: { ...this.config, project_id: projectId } },
        this.store,
        this.env,
      ),
    );
  }

  /** Review comments on the local forge's pull requests. */
  pullComments(): Promise<PullComments> {
    return this.once(
      "pullComments",
      async () =>
        new (await import("../../forge/index.js")).PullComments({
          store: this.store,
          projectId: this.config.project_id,
          forge: await this.localForge(),
        }),
    );
  }

  /** The forge OPEN_PR and the lane cycles use: GitHub when `github.repo` is configured, else the local forge. */
  forge(): Promise<Forge> {
    return this.once("forge", async () =>
      this.config.github?.repo
        ? (await import("../actions.js")).projectForge(this.project, this.store, this.env)
        : this.localForge(),
    );
  }

  /** Accepting a proposal applies it (installs its tools); changes are undone here. */
  environmentChanges(): Promise<EnvironmentChanges> {
    return this.once("environmentChanges", async () =>
      (await import("../supervisor.js")).projectEnvironmentChanges(
        this.project,
        this.store,
        await this.proposals(),
        this.env,
      ),
    );
  }

  /**
   * The project's supervisor (OA gate, actions, proposals, environments wired in), built once with
   * the options of the first call.
   */
  supervisor(options: Partial<ProjectSupervisorOptions> = {}): Promise<Supervisor> {
    return this.once("supervisor", async () =>
      (await import("../supervisor.js")).projectSupervisor({
        ...(this.options.logger ? { logger: this.options.logger } : {}),
        project: this.project,
        store: this.store,
        env: this.env,
        redactor: await this.redactor(),
        proposals: await this.proposals(),
        forge: await this.forge(),
        ...options,
      }),
    );
  }

  /** Kai's evidence sources: the repository, the board, the runs (with actions, proposals, local pull requests), GitHub. */
  async kaiSources(options: KaiSourcesOptions = {}): Promise<KaiSources> {
    const [{ kaiSources }, board, runs] = await Promise.all([import("../../kai/index.js"), this.board(), this.runs()]);
    // Kai asks actions, proposals and pull requests of the runs it found: their stores (and their
    // modules) are opened on that first question, not for a lane without runs. The one refusal
    // opening them can meet (the local forge's bare_repo outside the root) is checked now, so a
    // misconfigured project fails here as before rather than as a note inside the answer.
    confinePath(this.root, this.config.forge.bare_repo, "forge.bare_repo");
    const actions: RunReaders["actions"] = { forRuns: async (...a) => (await this.actions()).forRuns(...a) };
    const forge = (projectId: string): RunReaders["forge"] => ({
      byNumbers: async (...a) => (await this.localForge(projectId)).byNumbers(...a),
    });
    const proposals = (projectId: string): RunReaders["proposals"] => ({
      sightedIn: async (...a) => (await this.proposals(projectId)).sightedIn(...a),
    });
    // Another project of the repository: its own board, runs, proposals and pull requests, in the
    // same store (actions are found by their runs).
    const projectReaders = async (projectId: string) => ({
      board: await this.board(projectId),
      readers: { runs: await this.runs(projectId), actions, proposals: proposals(projectId), forge: forge(projectId) },
    });
    return kaiSources({
      config: this.config,
      repo: options.repo ?? this.root,
      board,
      readers: { runs, actions, proposals: proposals(this.config.project_id), forge: forge(this.config.project_id) },
      env: this.env,
      projectReaders,
    });
  }

  /** Closes the store when it was opened here. */
  async close(): Promise<void> {
    if (this.options.ownsStore) await this.store.close();
  }
}

/** Open a project: its config (given, or found) and its store (given, or opened and migrated). */
export async function openProject(options: OpenProjectOptions = {}): Promise<OpenProject> {
  const project = options.project ?? (await openConfig({ cwd: options.cwd, configPath: options.configPath }));
  const env = options.env ?? process.env;
  const store =
    options.store ??
    (await openStore({ root: project.root, storage: project.config.storage, migrations, ...options.storeOptions }));
  return new OpenProject(project, store, env, {
    ownsStore: options.store === undefined,
    secrets: [...(options.secrets ?? [])],
    logger: options.logger,
  });
}

/** Run `fn` with the project open, closing what was opened for it afterwards. */
export async function withProject<T>(options: OpenProjectOptions, fn: (p: OpenProject) => Promise<T>): Promise<T> {
  const p = await openProject(options);
  try {
    return await fn(p);
  } finally {
    await p.close();
  }
}
