/**
 * Git run by the supervisor (outside the sandbox) on a sprite's workspace: it reads only that
 * workspace's own repository. The sprite can write everything in its workspace, `.git` included,
 * so before git runs the repository is checked, and refused (workspace_git_refused) when:
 * - `.git` is not a directory of the workspace: a `gitdir:` file or a symlink names another
 *   repository (one the sandbox hides: another run's workspace, the forge, one under HOME);
 * - anything under `.git` is a symlink (a ref, packed-refs or the objects directory of another
 *   repository), a FIFO (git would wait on it forever), a socket or a device; or `.git/commondir`
 *   is there (another repository's refs and objects);
 * - `objects/info/alternates` names anything but the project repository's own objects. That one
 *   is allowed: it is what `git clone --shared` writes for every workspace (launch.ts), and sprites
 *   can read the project repository anyway;
 * - its config makes git read another file (`include.path`, `includeIf.*.path`: anywhere, or a
 *   FIFO), keeps config the check does not see (`extensions.worktreeConfig`), or names a program
 *   git runs on content (`filter.*`, `diff.*.textconv`, `diff.*.command`, `diff.external`,
 *   `merge.*.driver`, a `core.fsmonitor` that is not a boolean).
 * Then git gets `--git-dir=<workspace>/.git --work-tree=<workspace>`, and on its command line
 * (which wins over the repository's config) no fsmonitor and no hooks (`core.hooksPath` set by a
 * tool such as husky is common, so it is overridden rather than refused); a fetch runs
 * `git upload-pack --strict` on that directory (no `.git` discovery). `url.*.insteadOf`,
 * `core.sshCommand` and credential helpers only matter when git contacts a remote from the
 * workspace's repository, which the supervisor never does (OPEN_PR fetches from it into a
 * repository of its own, under that one's config). Where the sprites' sandbox is, the git that
 * reads the workspace also runs in one like theirs (`sandbox`): a sprite still running that
 * changes `.git` after the check reaches nothing it could not read itself.
 */
import { lstatSync, readFileSync, readdirSync, readlinkSync, realpathSync, type Dirent } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { RefusedError, sh } from "../core/index.js";
import { git } from "./git.js";

/** Bound on every git that reads a workspace. */
const WORKSPACE_GIT_TIMEOUT_MS = 120_000;

/** On git's command line: no fsmonitor program and no hooks, whatever the repository's config says. */
const OVERRIDES = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"];

/** Wraps an argv that reads a workspace in a sandbox like its sprite's (as it is where sprites are not sandboxed). */
export type WorkspaceSandbox = (argv: string[], workspace: string) => string[];

export interface WorkspaceGitOptions {
  /** The project root: its repository's objects are the one alternate a workspace may name. */
  root: string;
  sandbox?: WorkspaceSandbox | null;
}

function refused(workspace: string, why: string): RefusedError {
  return new RefusedError(
    "workspace_git_refused",
    `the workspace ${workspace} is refused: ${why}. The supervisor reads only the workspace's own repository (a .git directory holding its own objects and refs); restore it with \`git init\` or a fresh clone`,
  );
}

const kindOf = (e: Dirent) =>
  e.isSymbolicLink() ? "a symlink" : e.isFIFO() ? "a FIFO" : e.isSocket() ? "a socket" : "a device";

/** The config keys that read another file or name a program git runs on content (see above). */
function configProblem(key: string, value: string): string | null {
  const k = key.toLowerCase();
  if (k.startsWith("include.") || k.startsWith("includeif.")) return "makes git read another file";
  if (k === "extensions.worktreeconfig" && !/^(false|no|off|0)$/i.test(value))
    return "makes git read a per-worktree config";
  if (
    k.startsWith("filter.") ||
    /^diff\..*\.(textconv|command)$/.test(k) ||
    k === "diff.external" ||
    /^merge\..*\.driver$/.test(k)
  )
    return "names a program git would run";
  if (k === "core.fsmonitor" && !/^(true|false|yes|no|on|off|1|0|)$/i.test(value))
    return "names a program git would run";
  return null;
}

/** The project repository's objects directory (its real path), where a shared clone's alternates point; null when the root is no repository. */
async function projectObjects(root: string): Promise<string | null> {
  try {
    const common = await git(["rev-parse", "--path-format=absolute", "--git-common-dir"], {
      cwd: root,
      timeoutMs: WORKSPACE_GIT_TIMEOUT_MS,
    });
    return realpathSync(join(common, "objects"));
  } catch {
    return null;
  }
}

/** A sprite's workspace repository, checked: git on it reads nothing else. */
export class WorkspaceRepo {
  readonly gitDir: string;

  private constructor(
    readonly workspace: string,
    private readonly sandbox: WorkspaceSandbox | null,
  ) {
    this.gitDir = join(workspace, ".git");
  }

  /** Check the workspace's repository (see above); refused with why. */
  static async open(workspace: string, options: WorkspaceGitOptions): Promise<WorkspaceRepo> {
    const repo = new WorkspaceRepo(resolve(workspace), options.sandbox ?? null);
    repo.checkLayout();
    repo.checkAlternates(await projectObjects(options.root));
    await repo.checkConfig();
    return repo;
  }

  private checkLayout(): void {
    const ws = this.workspace;
    let st;
    try {
      st = lstatSync(this.gitDir);
    } catch {
      throw refused(ws, "it has no .git directory (it is not a git repository)");
    }
    if (st.isSymbolicLink())
      throw refused(ws, `its .git is a symlink (to ${readlinkSync(this.gitDir)}), not a directory of its own`);
    if (st.isFile()) {
      const first = readFileSync(this.gitDir, "utf8").split("\n")[0]!.slice(0, 200);
      throw refused(
        ws,
        `its .git is a file (${JSON.stringify(first)}) naming another repository, not a directory of its own`,
      );
    }
    if (!st.isDirectory()) throw refused(ws, "its .git is not a directory");
    for (const e of readdirSync(this.gitDir, { recursive: true, withFileTypes: true })) {
      if (e.isFile() || e.isDirectory()) continue;
      const where = relative(ws, join(e.parentPath ?? e.path, e.name));
      throw refused(
        ws,
        `${where} is ${kindOf(e)}${e.isSymbolicLink() ? ` (to ${readlinkSync(join(e.parentPath ?? e.path, e.name))})` : ""}`,
      );
    }
    if (readdirSync(this.gitDir).includes("commondir"))
      throw refused(ws, ".git/commondir makes git use another repository's refs and objects");
  }

  private checkAlternates(allowed: string | null): void {
    const objects = join(this.gitDir, "objects");
    let text: string;
    try {
      text = readFileSync(join(objects, "info", "alternates"), "utf8");
    } catch {
      return;
    }
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      let real: string | null;
      try {
        real = line.startsWith('"') ? null : realpathSync(isAbsolute(line) ? line : resolve(objects, line));
      } catch {
        real = null;
      }
      if (real === null || real !== allowed) {
        throw refused(
          this.workspace,
          `.git/objects/info/alternates names ${JSON.stringify(line.slice(0, 200))}: only the project repository's own objects${allowed ? ` (${allowed})` : ""} may be borrowed`,
        );
      }
    }
  }

  private async checkConfig(): Promise<void> {
    let listed: string;
    try {
      // Only that file: no system or global config, no includes followed.
      listed = await git(["config", "--file", join(this.gitDir, "config"), "--no-includes", "--null", "--list"], {
        cwd: "/",
        env: { GIT_CONFIG_GLOBAL: "/dev/null" },
        timeoutMs: WORKSPACE_GIT_TIMEOUT_MS,
      });
    } catch (err) {
      throw refused(this.workspace, `its .git/config cannot be read (${(err as Error).message})`);
    }
    for (const item of listed.split("\0")) {
      if (item === "") continue;
      const nl = item.indexOf("\n");
      const key = nl < 0 ? item : item.slice(0, nl);
      const value = nl < 0 ? "" : item.slice(nl + 1);
      const problem = configProblem(key, value);
      if (problem) throw refused(this.workspace, `its .git/config sets ${key}, which ${problem}`);
    }
  }

  private wrap = (argv: string[]): string[] => (this.sandbox ? this.sandbox(argv, this.workspace) : argv);

  /** git on this repository only (explicit --git-dir and --work-tree, no fsmonitor, no hooks), sandboxed where sprites are. */
  git(args: string[]): Promise<string> {
    return git([`--git-dir=${this.gitDir}`, `--work-tree=${this.workspace}`, ...OVERRIDES, ...args], {
      cwd: this.workspace,
      wrap: this.wrap,
      timeoutMs: WORKSPACE_GIT_TIMEOUT_MS,
    });
  }

  /** The commit `branch` points to here, or undefined. */
  async branchSha(branch: string): Promise<string | undefined> {
    try {
      return await this.git(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`]);
    } catch {
      return undefined;
    }
  }

  /** What `git fetch` (run in the supervisor's repository) is given to read exactly this repository: its upload-pack, and the repository. */
  fetchSource(): string[] {
    const uploadPack = this.wrap(["git", ...OVERRIDES, "upload-pack", "--strict"]);
    return ["--upload-pack", uploadPack.map(sh).join(" "), this.gitDir];
  }
}
