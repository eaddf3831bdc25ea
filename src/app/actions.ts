import { confinePath, createLogger, type Logger, type Redactor } from "../core/index.js";
import { allRoles, type Project } from "../config/light/index.js";
import type { Store } from "../store/index.js";
// The sub-modules, not the lattice facade: opening a project for a read (Kai, the CLI's lists)
// must not load the supervisor, the agents and the checkpoints with it.
import { findSandboxTool, helperSandbox, hiddenFromSprites, sandboxArgv } from "../lattice/sandbox/index.js";
import {
  ConsoleNotifier,
  WebhookNotifier,
  type Notifier,
  SecretStore,
  projectRedactor,
  ActionExecutor,
  type RetryPolicy,
  fetchCredentialHandler,
  labelIssueHandler,
  notifyUserHandler,
  openPrHandler,
  postCommentHandler,
  type GitHubTarget,
  type ActionHandler,
  type ResumeFn,
} from "../lattice/actions/index.js";
import type { SupervisorOptions } from "../lattice/index.js";
import {
  GitHubForge,
  LocalForge,
  type Forge,
  type WorkspaceSandbox,
  gitHubClient,
  gitHubRemoteUrl,
} from "../forge/index.js";

/** Environment variable that overrides the git URL OPEN_PR pushes to when GitHub is configured. */
export const GITHUB_GIT_URL_ENV = "PMAGENT_GITHUB_GIT_URL";

export interface ProjectActionsOptions {
  project: Project;
  store: Store;
  resume: ResumeFn;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Console notifications (default: stderr). */
  consoleWrite?: (line: string) => void;
  retry?: Partial<RetryPolicy>;
  leaseMs?: number;
  /** The forge OPEN_PR opens on (default: the project's, built here). */
  forge?: Forge;
  /** Default: the project's (its secrets redacted). */
  redactor?: Redactor;
}

/**
 * Where the supervisor's git reads a sprite's workspace: in a sandbox like the sprite's (what it
 * hides hidden, no network), or as it is where sprites run unsandboxed. Decided at each use, as a
 * run's sandbox is ("required" without bubblewrap fails the OPEN_PR, as it fails runs).
 */
export function workspaceSandbox(
  project: Project,
  store: Store,
  env: NodeJS.ProcessEnv = process.env,
): WorkspaceSandbox {
  const storeFile = store.dialect === "sqlite" ? store.location : null;
  return (argv, workspace) => {
    const { bwrap } = findSandboxTool(project.config.sandbox, env.PATH ?? "");
    if (!bwrap) return argv;
    return sandboxArgv(
      argv,
      helperSandbox({
        bwrap,
        hidden: hiddenFromSprites(project, storeFile, env.HOME),
        home: env.HOME,
        path: env.PATH,
        workspace,
        readable: [project.root],
        network: "none",
      }),
    );
  };
}

/** The local forge of a project (its bare repository and pull requests table), whatever forge OPEN_PR uses. */
export function localForge(project: Project, store: Store, env: NodeJS.ProcessEnv = process.env): LocalForge {
  return new LocalForge({
    store,
    projectId: project.config.project_id,
    root: project.root,
    bareRepo: project.config.forge.bare_repo,
    sandbox: workspaceSandbox(project, store, env),
    remote: project.config.forge.remote,
  });
}

/** The forge of a project: GitHub when `github.repo` is configured, else the local forge. */
export function projectForge(project: Project, store: Store, env: NodeJS.ProcessEnv = process.env): Forge {
  const gh = project.config.github;
  if (gh?.repo) {
    const settings = { repo: gh.repo, tokenEnv: gh.token_env, apiUrl: gh.api_url };
    return new GitHubForge({
      client: () => gitHubClient(settings, env),
      tokenEnv: gh.token_env,
      remoteUrl: env[GITHUB_GIT_URL_ENV] ?? gitHubRemoteUrl(gh.api_url, gh.repo),
      root: project.root,
      sandbox: workspaceSandbox(project, store, env),
    });
  }
  return localForge(project, store, env);
}

/** Where a project's lane cycles live (the forge's bare repository) and the forge their pull requests open on. */
export function projectCycles(
  project: Project,
  store: Store,
  env: NodeJS.ProcessEnv = process.env,
  forge: Forge = projectForge(project, store, env),
): NonNullable<SupervisorOptions["cycles"]> {
  return {
    repo: confinePath(project.root, project.config.forge.bare_repo, "forge.bare_repo"),
    remote: project.config.forge.remote,
    root: project.root,
    sandbox: workspaceSandbox(project, store, env),
    forge,
  };
}

/** The notifiers of a project: the webhook when configured, then the console. */
export function projectNotifiers(
  project: Project,
  redactor: Redactor,
  consoleWrite?: (line: string) => void,
): Notifier[] {
  const out: Notifier[] = [];
  if (project.config.notify.webhook_url) out.push(new WebhookNotifier(project.config.notify.webhook_url, redactor));
  out.push(new ConsoleNotifier(redactor, consoleWrite));
  return out;
}

/** The handlers of the five known actions, wired to a project's config. */
export function projectHandlers(options: ProjectActionsOptions, redactor: Redactor): Record<string, ActionHandler> {
  const { project, store } = options;
  const env = options.env ?? process.env;
  const gh = project.config.github;
  const github: GitHubTarget | undefined = gh?.repo
    ? {
        client: () => gitHubClient({ repo: gh.repo!, tokenEnv: gh.token_env, apiUrl: gh.api_url }, env),
        tokenEnv: gh.token_env,
      }
    : undefined;
  const roles = new Map(allRoles(project.config).map(({ role }) => [role.name, role.credentials]));
  return {
    OPEN_PR: openPrHandler(options.forge ?? projectForge(project, store, env)),
    POST_COMMENT: postCommentHandler(github),
    LABEL_ISSUE: labelIssueHandler(github),
    NOTIFY_USER: notifyUserHandler(projectNotifiers(project, redactor, options.consoleWrite)),
    FETCH_CREDENTIAL: fetchCredentialHandler({
      secrets: new SecretStore({ env, root: project.root, file: project.config.secrets.file }),
      allowed: (role) => roles.get(role) ?? [],
    }),
  };
}

/** An ActionExecutor for a project: its forge, GitHub, notifiers and secret store. */
export function projectActionExecutor(options: ProjectActionsOptions): ActionExecutor {
  const env = options.env ?? process.env;
  const redactor = options.redactor ?? projectRedactor(options.project, env);
  return new ActionExecutor({
    store: options.store,
    handlers: projectHandlers(options, redactor),
    resume: options.resume,
    logger: options.logger ?? createLogger("pmagent-actions", redactor),
    redactor,
    retry: options.retry,
    leaseMs: options.leaseMs,
  });
}
