/**
 * Accepted environment proposals applied: what accepting one did (tools installed or selected
 * for the role's later runs, or nothing beyond its variables), recorded once per proposal as
 * applied, failed (with the installer's reason; nothing applied) or undone; and the environment
 * a role's later runs get from them.
 */
import { realpathSync, rmSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ConflictError, NotFoundError, PmagentError, UsageError, contentHash } from "../../core/index.js";
import { inChunks, marks, type Store } from "../../store/index.js";
import { findExecutable, findSandboxTool, type SandboxMode } from "../sandbox/index.js";
import { applyAdjustment, emptyRoleEnvironment, shellQuote, type RoleEnvironment } from "./adjustments.js";
import {
  InstallFailed,
  Installer,
  aptDownloadArgv,
  aptKnows,
  aptShowArgv,
  debExtractArgv,
  debInstall,
  findRuntime,
  npmInstall,
  npmInstallArgv,
  runtimeNames,
  selectRuntime,
  type InstalledTool,
  type ToolSource,
} from "./install.js";
import { isDeb, isPackageFile, isTarball, namesProblem, unsafeProposal } from "./names.js";
import type { EnvironmentProposal, ProposalStore } from "./proposals.js";

export const CHANGE_STATUSES = ["applied", "failed", "undone"] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];

/** What an applied change added, beyond its adjustment's variables: tools, their directories relative to the project root. */
export interface ChangeEffect {
  /** The change's own directory (`.pmagent/tools/<role|global>/<proposal>`), or null when nothing was installed. */
  tools_dir: string | null;
  installed: InstalledTool[];
}

export interface EnvironmentChange {
  id: string;
  project_id: string;
  proposal_id: string;
  /** The role whose later runs it changes, or "*" for every role (a global_candidate proposal). */
  applies_to: string;
  adjustment_type: string;
  status: ChangeStatus;
  effect: ChangeEffect;
  /** Why it failed (the installer's words). */
  reason: string | null;
  applied_by: string;
  applied_at: string;
  undone_by: string | null;
  undone_at: string | null;
}

interface Row extends Omit<EnvironmentChange, "effect"> {
  effect_json: string;
}

const toChange = (r: Row): EnvironmentChange => ({
  id: r.id,
  project_id: r.project_id,
  proposal_id: r.proposal_id,
  applies_to: r.applies_to,
  adjustment_type: r.adjustment_type,
  status: r.status,
  effect: JSON.parse(r.effect_json) as ChangeEffect,
  reason: r.reason,
  applied_by: r.applied_by,
  applied_at: r.applied_at,
  undone_by: r.undone_by,
  undone_at: r.undone_at,
});

/** Proposals with scope global_candidate apply, once accepted, to every role. */
export const appliesTo = (p: EnvironmentProposal): string => (p.scope === "global_candidate" ? "*" : p.role);

const SOURCES: Record<string, ToolSource> = { npm: "npm", deb: "deb", apt: "deb", path: "path" };
const JS_MANAGERS = ["pnpm", "yarn", "bun"];

function text(d: Record<string, unknown>, key: string): string | undefined {
  const v = d[key];
  return typeof v === "string" && v.trim() ? v.trim() : typeof v === "number" ? String(v) : undefined;
}

/** The Debian packages an add_system_package names. */
function systemPackages(d: Record<string, unknown>): string[] {
  if (Array.isArray(d.packages))
    return d.packages.filter((x): x is string => typeof x === "string" && x.trim() !== "").map((x) => x.trim());
  const one = text(d, "package") ?? text(d, "packages") ?? text(d, "name");
  return one === undefined ? [] : [one];
}

const managerOf = (d: Record<string, unknown>) => text(d, "to") ?? text(d, "manager") ?? text(d, "dependency_manager")!;
/** Where a runtime comes from: the source named, else what its package file is, else undecided (the PATH, then apt, then npm). */
const runtimeSource = (source: ToolSource | undefined, pkg: string | undefined) =>
  source ?? (pkg && isTarball(pkg) ? "npm" : pkg && isDeb(pkg) ? "deb" : undefined);
const npmSpec = (runtime: string, version: string | undefined) => (version ? `${runtime}@${version}` : runtime);
const viaNpm = (source: ToolSource | undefined, spec: string, manager: string) =>
  source === "npm" || (source === undefined && (isTarball(spec) || (!isDeb(spec) && JS_MANAGERS.includes(manager))));

/** Check, before a proposal is accepted, what installing it needs (a known source) and that it names nothing but bare names and package files. */
export function checkInstallDetails(p: EnvironmentProposal): void {
  const source = text(p.details, "source");
  if (source !== undefined && !(source in SOURCES)) {
    throw new UsageError(
      "proposal_details_invalid",
      `environment proposal ${p.id} (${p.adjustment_type}) has details.source "${source}": use npm, apt (or deb) or path`,
    );
  }
  const problem = namesProblem(p.adjustment_type, p.details);
  if (problem) throw unsafeProposal(p.id, p.adjustment_type, problem);
}

/** One thing accepting a proposal does, as the plan shows it. */
export interface PlannedStep {
  /** When it runs ("else", "if apt knows it", "before each run of Builder"); null: always, in order. */
  when: string | null;
  /** The command exactly as it runs (inside the sandbox `isolation` names), or null for what the supervisor does itself. */
  argv: string[] | null;
  /** The same, as a shell would take it. */
  command: string | null;
  what: string;
}

/** What accepting a proposal will run, where and how (`env show`, the console), or why it is refused. */
export interface InstallPlan {
  proposal_id: string;
  adjustment_type: string;
  /** Why accepting it is refused (then nothing runs), or null. */
  refused: string | null;
  /** How its commands run: sandboxed or not, with what environment. */
  isolation: string | null;
  steps: PlannedStep[];
}

export interface EnvironmentChangesOptions {
  store: Store;
  proposals: ProposalStore;
  projectId: string;
  /** The project root: tools go under its `.pmagent/tools/`. */
  root: string;
  /** The supervisor's environment: installers get its PATH and allow-listed variables only; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The config's `sandbox`: installers run in bubblewrap unless "off" (or "auto" without it); default "auto". */
  sandbox?: SandboxMode;
  /** What installers must not see (the sprites' hidden paths); default the project's .pmagent and HOME. */
  hidden?: string[];
  clock?: () => number;
}

type Step = Omit<PlannedStep, "command">;
const withCommand = (s: Step): PlannedStep => ({ ...s, command: s.argv ? s.argv.map(shellQuote).join(" ") : null });

const unsandboxedWhy = (mode: SandboxMode) =>
  mode === "off" ? `the config's "sandbox" is "off"` : "bubblewrap is not usable here";

/** The changes accepted proposals made to a project's role environments. */
export class EnvironmentChanges {
  constructor(private readonly o: EnvironmentChangesOptions) {}

  private get env(): NodeJS.ProcessEnv {
    return this.o.env ?? process.env;
  }

  /** How installers run here; throws (sandbox_unavailable) when the config requires bubblewrap and it is not usable. */
  installer(): Installer {
    const mode = this.o.sandbox ?? "auto";
    const { bwrap } = findSandboxTool(mode, this.env.PATH ?? "");
    const hidden = this.o.hidden ?? [
      join(this.o.root, ".pmagent"),
      ...(this.env.HOME && resolve(this.env.HOME) !== "/" ? [this.env.HOME] : []),
    ];
    return new Installer({
      env: this.env,
      bwrap,
      ...(bwrap ? {} : { unsandboxed: unsandboxedWhy(mode) }),
      hidden,
      root: this.o.root,
    });
  }

  /** The tools directory of a proposal's change. */
  private toolsDir(p: EnvironmentProposal): string {
    return join(this.o.root, ".pmagent", "tools", appliesTo(p) === "*" ? "global" : p.role, p.id);
  }

  /**
   * The package file a proposal names, as it is installed: its real path, which must be a regular
   * file outside the project's directory. Sprites write only there (workspaces, checkpoints and
   * their HOMEs are all inside it), so a sprite cannot have written what is installed.
   */
  private packageFile(p: EnvironmentProposal, spec: string): string {
    let real: string;
    try {
      real = realpathSync(spec);
    } catch {
      throw new InstallFailed(`${isDeb(spec) ? "Debian" : "npm"} package file ${spec} does not exist`);
    }
    const root = realpathSync(this.o.root);
    const inside = (dir: string) => real === dir || real.startsWith(dir === sep ? dir : `${dir}${sep}`);
    if (inside(root))
      throw unsafeProposal(
        p.id,
        p.adjustment_type,
        `details.package ${JSON.stringify(spec)} is in the project's directory ${root}, where sprites write (workspaces, checkpoints): a package file must be outside it`,
      );
    if (["/proc", "/sys", "/dev"].some(inside) || !statSync(real).isFile())
      throw unsafeProposal(p.id, p.adjustment_type, `details.package ${JSON.stringify(spec)} is not a regular file`);
    return real;
  }

  /** The proposal's package specs as installed: names as they are, package files by their checked real path. */
  private packages(p: EnvironmentProposal): Map<string, string> {
    checkInstallDetails(p);
    const d = p.details;
    const specs = [text(d, "package"), ...(p.adjustment_type === "add_system_package" ? systemPackages(d) : [])].filter(
      (x): x is string => x !== undefined,
    );
    return new Map(specs.map((s) => [s, isPackageFile(s) ? this.packageFile(p, s) : s]));
  }

  /** A human accepts a proposal, and its change is applied now: installed, or recorded as failed with why. */
  async accept(id: string, actor: string): Promise<{ proposal: EnvironmentProposal; change: EnvironmentChange }> {
    this.o.proposals.requireHuman(actor, "accept an environment proposal");
    const pending = await this.o.proposals.get(id);
    // Refused before it is accepted: unsafe names, package files where sprites write, no sandbox where one is required.
    try {
      this.packages(pending);
    } catch (err) {
      if (!(err instanceof InstallFailed)) throw err;
    }
    this.installer();
    const proposal = await this.o.proposals.accept(id, actor);
    return { proposal, change: await this.apply(proposal, actor) };
  }

  /** Apply an accepted proposal (once): install what it names into its own tools directory. */
  async apply(p: EnvironmentProposal, actor: string): Promise<EnvironmentChange> {
    if (p.status !== "accepted")
      throw new ConflictError(
        "proposal_not_accepted",
        `environment proposal ${p.id} is ${p.status}: only an accepted proposal is applied`,
      );
    const dir = this.toolsDir(p);
    let status: ChangeStatus = "applied";
    let reason: string | null = null;
    let installed: InstalledTool[] = [];
    try {
      installed = await this.install(p, dir);
    } catch (err) {
      if (!(err instanceof InstallFailed)) throw err;
      status = "failed";
      reason = err.message;
    }
    if (installed.length === 0) rmSync(dir, { recursive: true, force: true });
    const rel = (d: string) => relative(this.o.root, d);
    const effect: ChangeEffect = {
      tools_dir: installed.length ? rel(dir) : null,
      installed: installed.map((t) => ({ ...t, bin: t.bin.map(rel) })),
    };
    const ms = (this.o.clock ?? Date.now)();
    const changeId = `envc_${contentHash({ project: this.o.projectId, proposal: p.id }).slice(0, 12)}`;
    const r = await this.o.store.run(
      `INSERT INTO lattice_env_changes (id, project_id, proposal_id, applies_to, adjustment_type, status, effect_json, reason, applied_by, applied_at, applied_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, proposal_id) DO NOTHING`,
      [
        changeId,
        this.o.projectId,
        p.id,
        appliesTo(p),
        p.adjustment_type,
        status,
        JSON.stringify(effect),
        reason,
        actor,
        new Date(ms).toISOString(),
        ms,
      ],
    );
    if (r.changes === 0)
      throw new ConflictError("change_exists", `environment proposal ${p.id} was applied already (change ${changeId})`);
    return this.get(changeId);
  }

  /** What installing the proposal's tools means; nothing for adjustments that only set variables or the network. */
  private async install(p: EnvironmentProposal, dir: string): Promise<InstalledTool[]> {
    const d = p.details;
    const specs = this.packages(p);
    const installer = this.installer();
    const source = SOURCES[text(d, "source") ?? ""];
    const given = text(d, "package");
    const pkg = given === undefined ? undefined : specs.get(given)!;
    switch (p.adjustment_type) {
      case "runtime_install":
      case "runtime_version_adjust": {
        const runtime = text(d, "runtime") ?? text(d, "name")!;
        const version = text(d, "version");
        const from = runtimeSource(source, pkg);
        if (from === undefined || from === "path") {
          const exe = await findRuntime(runtime, version, installer);
          if (exe) return [selectRuntime(runtime, exe, dir)];
          if (from === "path")
            throw new InstallFailed(
              `no ${runtime}${version ? ` reporting version ${version}` : ""} on this machine's PATH`,
            );
        }
        let tool: InstalledTool;
        if (from === "deb" || (from === undefined && (await aptKnows(pkg ?? runtime, installer))))
          tool = await debInstall(pkg ?? runtime, dir, installer);
        else tool = await npmInstall(pkg ?? npmSpec(runtime, version), dir, installer);
        if (!findExecutable(runtime, tool.bin.join(delimiter)))
          throw new InstallFailed(`${tool.package} was installed but holds no program named ${runtime}`);
        return [tool];
      }
      case "add_system_package": {
        const out: InstalledTool[] = [];
        for (const name of systemPackages(d)) out.push(await debInstall(specs.get(name)!, dir, installer));
        return out;
      }
      case "dependency_manager_switch": {
        const manager = managerOf(d);
        if (!pkg && findExecutable(manager, this.env.PATH ?? "")) return [];
        const spec = pkg ?? manager;
        return [
          viaNpm(source, spec, manager)
            ? await npmInstall(spec, dir, installer)
            : await debInstall(spec, dir, installer),
        ];
      }
      default:
        return [];
    }
  }

  /**
   * What accepting a proposal will run, where and how, or why it is refused: the same commands
   * `install` runs, in its order (a runtime: the PATH first, then apt when it knows the package,
   * else npm). Nothing runs to make it.
   */
  plan(p: EnvironmentProposal): InstallPlan {
    const base = { proposal_id: p.id, adjustment_type: p.adjustment_type };
    const env = emptyRoleEnvironment(p.role);
    let specs: Map<string, string>;
    let installer: Installer;
    try {
      // What accepting checks: the details later runs need, the names, the package files, the sandbox.
      applyAdjustment(env, p);
      specs = this.packages(p);
      installer = this.installer();
    } catch (err) {
      if (!(err instanceof PmagentError)) throw err;
      return { ...base, refused: err.message, isolation: null, steps: [] };
    }
    const d = p.details;
    const dir = this.toolsDir(p);
    const source = SOURCES[text(d, "source") ?? ""];
    const given = text(d, "package");
    const pkg = given === undefined ? undefined : specs.get(given)!;
    const npm = (spec: string, when: string | null): Step => ({
      when,
      argv: npmInstallArgv(spec, dir),
      what: "install the npm package into the change's directory",
    });
    const deb = (name: string, when: string | null): Step[] =>
      isDeb(name)
        ? [{ when, argv: debExtractArgv(name, dir), what: "unpack the Debian package into the change's directory" }]
        : [
            { when, argv: aptDownloadArgv(name), what: `download the Debian package into ${join(dir, ".download-*")}` },
            {
              when,
              argv: debExtractArgv(join(dir, ".download-*", `${name}_*.deb`), dir),
              what: "unpack it into the change's directory",
            },
          ];
    const steps: Step[] = [];
    switch (p.adjustment_type) {
      case "runtime_install":
      case "runtime_version_adjust": {
        const runtime = text(d, "runtime") ?? text(d, "name");
        if (runtime === undefined) break;
        const version = text(d, "version");
        const from = runtimeSource(source, pkg);
        if (from === undefined || from === "path") {
          const names = runtimeNames(runtime, version).join(", ");
          steps.push({
            when: null,
            argv: null,
            what: `link the first of ${names} on the PATH${version ? ` whose \`--version\` reports ${version} (each found one's --version runs)` : ""} into ${join(dir, "bin")}${from === "path" ? "; none: the change fails" : ""}`,
          });
        }
        if (from === "path") break;
        if (from === undefined)
          steps.push({
            when: "if none is found",
            argv: aptShowArgv(pkg ?? runtime),
            what: "ask apt whether it knows the package",
          });
        if (from !== "npm") steps.push(...deb(pkg ?? runtime, from === undefined ? "if apt knows it" : null));
        if (from !== "deb") steps.push(npm(pkg ?? npmSpec(runtime, version), from === undefined ? "else" : null));
        break;
      }
      case "add_system_package":
        for (const name of systemPackages(d)) steps.push(...deb(specs.get(name)!, null));
        break;
      case "dependency_manager_switch": {
        const manager = managerOf(d);
        if (!pkg && findExecutable(manager, this.env.PATH ?? ""))
          steps.push({ when: null, argv: null, what: `nothing: ${manager} is on the PATH already` });
        else if (viaNpm(source, pkg ?? manager, manager)) steps.push(npm(pkg ?? manager, null));
        else steps.push(...deb(pkg ?? manager, null));
        break;
      }
      case "add_preinstall_step": {
        // Not an installer: it runs where and as the role's sprites do.
        const where = installer.isolation.bwrap
          ? "in the run's sandbox"
          : `NOT sandboxed (${installer.isolation.unsandboxed})`;
        const who = p.scope === "global_candidate" ? "every role" : p.role;
        return {
          ...base,
          refused: null,
          isolation: `${where}, with the sprite's environment, in its workspace`,
          steps: env.preinstall.map((s) =>
            withCommand({
              when: `before each run of ${who}`,
              argv: ["sh", "-c", s.command],
              what: "the pre-install step",
            }),
          ),
        };
      }
    }
    return {
      ...base,
      refused: null,
      isolation: steps.length ? installer.describe() : null,
      steps: steps.map(withCommand),
    };
  }

  /** A change by its id or its proposal's id. */
  async get(id: string): Promise<EnvironmentChange> {
    const row = await this.o.store.get<Row>(
      "SELECT * FROM lattice_env_changes WHERE project_id = ? AND (id = ? OR proposal_id = ?)",
      [this.o.projectId, id, id],
    );
    if (!row)
      throw new NotFoundError(
        "change_not_found",
        `no environment change "${id}" in project ${this.o.projectId}: see \`pmagent env show ROLE\` (a change is made when a proposal is accepted)`,
      );
    return toChange(row);
  }

  /** The change each of these proposals made (accepted ones; none for a proposal never applied). */
  async forProposals(proposalIds: readonly string[]): Promise<Map<string, EnvironmentChange>> {
    const rows = await inChunks(proposalIds, (chunk) =>
      this.o.store.all<Row>(
        `SELECT * FROM lattice_env_changes WHERE project_id = ? AND proposal_id IN (${marks(chunk.length)})`,
        [this.o.projectId, ...chunk],
      ),
    );
    return new Map(rows.map((r) => [r.proposal_id, toChange(r)]));
  }

  /** The changes of a role's environment (its own and every role's), oldest first; all of them without a role. */
  async list(role?: string): Promise<EnvironmentChange[]> {
    const rows = role
      ? await this.o.store.all<Row>(
          "SELECT * FROM lattice_env_changes WHERE project_id = ? AND applies_to IN (?, '*') ORDER BY applied_ms, id",
          [this.o.projectId, role],
        )
      : await this.o.store.all<Row>("SELECT * FROM lattice_env_changes WHERE project_id = ? ORDER BY applied_ms, id", [
          this.o.projectId,
        ]);
    return rows.map(toChange);
  }

  /** A human undoes an applied change: its tools are removed and later runs no longer get it. */
  async undo(id: string, actor: string): Promise<EnvironmentChange> {
    this.o.proposals.requireHuman(actor, "undo an environment change");
    const c = await this.get(id);
    if (c.status === "undone")
      throw new ConflictError(
        "change_undone",
        `environment change ${c.id} (proposal ${c.proposal_id}) was already undone by ${c.undone_by ?? "?"} at ${c.undone_at ?? "?"}`,
      );
    if (c.status === "failed")
      throw new ConflictError(
        "change_not_applied",
        `environment change ${c.id} (proposal ${c.proposal_id}) failed and was never applied (${c.reason ?? "no reason"}): nothing to undo`,
      );
    const at = new Date((this.o.clock ?? Date.now)()).toISOString();
    const r = await this.o.store.run(
      "UPDATE lattice_env_changes SET status = 'undone', undone_by = ?, undone_at = ? WHERE id = ? AND status = 'applied'",
      [actor, at, c.id],
    );
    if (r.changes === 0)
      throw new ConflictError("change_undone", `environment change ${c.id} was undone by someone else meanwhile`);
    if (c.effect.tools_dir) rmSync(resolve(this.o.root, c.effect.tools_dir), { recursive: true, force: true });
    return this.get(c.id);
  }

  /** An installed tool's directories, absolute. */
  binDirs(c: EnvironmentChange): string[] {
    return c.effect.installed.flatMap((t) => t.bin.map((b) => (isAbsolute(b) ? b : resolve(this.o.root, b))));
  }
}

/**
 * The environment accepted proposals give a role's later runs (oldest decision first, so later
 * ones win; a global_candidate proposal counts for every role). With `changes`, a proposal whose
 * change failed or was undone is left out, and installed tools go first on the PATH; without,
 * or for a proposal accepted before changes were recorded, only its variables apply.
 */
export async function roleEnvironment(
  proposals: ProposalStore,
  role: string,
  changes?: EnvironmentChanges,
): Promise<RoleEnvironment> {
  const accepted = await proposals.acceptedFor(role);
  const byProposal = new Map((changes ? await changes.list(role) : []).map((c) => [c.proposal_id, c]));
  const env = emptyRoleEnvironment(role);
  for (const p of accepted) {
    const c = byProposal.get(p.id);
    if (c && c.status !== "applied") continue;
    applyAdjustment(env, p);
    if (c && changes) {
      const bins = changes.binDirs(c);
      env.path = [...bins, ...env.path.filter((d) => !bins.includes(d))];
    }
  }
  if (env.adjustments.length > 0)
    env.env.PMAGENT_ENVIRONMENT = JSON.stringify(env.adjustments.map((a) => ({ type: a.type, details: a.details })));
  return env;
}
