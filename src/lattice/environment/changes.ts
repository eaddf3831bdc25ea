/**
 * Accepted environment proposals applied: what accepting one did (tools installed or selected
 * for the role's later runs, or nothing beyond its variables), recorded once per proposal as
 * applied, failed (with the installer's reason; nothing applied) or undone; and the environment
 * a role's later runs get from them.
 */
import { rmSync } from "node:fs";
import { delimiter, isAbsolute, join, relative, resolve } from "node:path";
import { ConflictError, NotFoundError, UsageError, contentHash } from "../../core/index.js";
import type { Store } from "../../store/index.js";
import { findExecutable } from "../sandbox/index.js";
import { applyAdjustment, emptyRoleEnvironment, type RoleEnvironment } from "./adjustments.js";
import { InstallFailed, aptKnows, debInstall, findRuntime, isDeb, isTarball, npmInstall, selectRuntime, type InstalledTool, type ToolSource } from "./install.js";
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

/** Check, before a proposal is accepted, what installing it needs (a known source). */
export function checkInstallDetails(p: EnvironmentProposal): void {
  const source = text(p.details, "source");
  if (source !== undefined && !(source in SOURCES)) {
    throw new UsageError("proposal_details_invalid", `environment proposal ${p.id} (${p.adjustment_type}) has details.source "${source}": use npm, apt (or deb) or path`);
  }
}

export interface EnvironmentChangesOptions {
  store: Store;
  proposals: ProposalStore;
  projectId: string;
  /** The project root: tools go under its `.pmagent/tools/`. */
  root: string;
  /** The installers' environment (npm and apt-get need PATH and HOME); default process.env. */
  env?: NodeJS.ProcessEnv;
  clock?: () => number;
}

/** The changes accepted proposals made to a project's role environments. */
export class EnvironmentChanges {
  constructor(private readonly o: EnvironmentChangesOptions) {}

  private get env(): NodeJS.ProcessEnv {
    return this.o.env ?? process.env;
  }

  /** A human accepts a proposal, and its change is applied now: installed, or recorded as failed with why. */
  async accept(id: string, actor: string): Promise<{ proposal: EnvironmentProposal; change: EnvironmentChange }> {
    this.o.proposals.requireHuman(actor, "accept an environment proposal");
    checkInstallDetails(await this.o.proposals.get(id));
    const proposal = await this.o.proposals.accept(id, actor);
    return { proposal, change: await this.apply(proposal, actor) };
  }

  /** Apply an accepted proposal (once): install what it names into its own tools directory. */
  async apply(p: EnvironmentProposal, actor: string): Promise<EnvironmentChange> {
    if (p.status !== "accepted") throw new ConflictError("proposal_not_accepted", `environment proposal ${p.id} is ${p.status}: only an accepted proposal is applied`);
    const dir = join(this.o.root, ".pmagent", "tools", appliesTo(p) === "*" ? "global" : p.role, p.id);
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
    const effect: ChangeEffect = { tools_dir: installed.length ? rel(dir) : null, installed: installed.map((t) => ({ ...t, bin: t.bin.map(rel) })) };
    const ms = (this.o.clock ?? Date.now)();
    const changeId = `envc_${contentHash({ project: this.o.projectId, proposal: p.id }).slice(0, 12)}`;
    const r = await this.o.store.run(
      `INSERT INTO lattice_env_changes (id, project_id, proposal_id, applies_to, adjustment_type, status, effect_json, reason, applied_by, applied_at, applied_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, proposal_id) DO NOTHING`,
      [changeId, this.o.projectId, p.id, appliesTo(p), p.adjustment_type, status, JSON.stringify(effect), reason, actor, new Date(ms).toISOString(), ms],
    );
    if (r.changes === 0) throw new ConflictError("change_exists", `environment proposal ${p.id} was applied already (change ${changeId})`);
    return this.get(changeId);
  }

  /** What installing the proposal's tools means; nothing for adjustments that only set variables or the network. */
  private async install(p: EnvironmentProposal, dir: string): Promise<InstalledTool[]> {
    const d = p.details;
    const root = this.o.root;
    const source = SOURCES[text(d, "source") ?? ""];
    const pkg = text(d, "package");
    switch (p.adjustment_type) {
      case "runtime_install":
      case "runtime_version_adjust": {
        const runtime = text(d, "runtime") ?? text(d, "name")!;
        const version = text(d, "version");
        const from = source ?? (pkg && isTarball(pkg) ? "npm" : pkg && isDeb(pkg) ? "deb" : undefined);
        if (from === undefined || from === "path") {
          const exe = await findRuntime(runtime, version, this.env);
          if (exe) return [selectRuntime(runtime, exe, dir)];
          if (from === "path") throw new InstallFailed(`no ${runtime}${version ? ` reporting version ${version}` : ""} on this machine's PATH`);
        }
        let tool: InstalledTool;
        if (from === "deb" || (from === undefined && (await aptKnows(pkg ?? runtime, this.env)))) tool = await debInstall(pkg ?? runtime, dir, root, this.env);
        else tool = await npmInstall(pkg ?? (version ? `${runtime}@${version}` : runtime), dir, root, this.env);
        if (!findExecutable(runtime, tool.bin.join(delimiter))) throw new InstallFailed(`${tool.package} was installed but holds no program named ${runtime}`);
        return [tool];
      }
      case "add_system_package": {
        const list = Array.isArray(d.packages) ? d.packages.filter((x): x is string => typeof x === "string" && x.length > 0) : [text(d, "package") ?? text(d, "packages") ?? text(d, "name")!];
        const out: InstalledTool[] = [];
        for (const name of list) out.push(await debInstall(name, dir, root, this.env));
        return out;
      }
      case "dependency_manager_switch": {
        const manager = text(d, "to") ?? text(d, "manager") ?? text(d, "dependency_manager")!;
        if (!pkg && findExecutable(manager, this.env.PATH ?? "")) return [];
        const spec = pkg ?? manager;
        const viaNpm = source === "npm" || (source === undefined && (isTarball(spec) || (!isDeb(spec) && JS_MANAGERS.includes(manager))));
        return [viaNpm ? await npmInstall(spec, dir, root, this.env) : await debInstall(spec, dir, root, this.env)];
      }
      default:
        return [];
    }
  }

  /** A change by its id or its proposal's id. */
  async get(id: string): Promise<EnvironmentChange> {
    const row = await this.o.store.get<Row>("SELECT * FROM lattice_env_changes WHERE project_id = ? AND (id = ? OR proposal_id = ?)", [this.o.projectId, id, id]);
    if (!row) throw new NotFoundError("change_not_found", `no environment change "${id}" in project ${this.o.projectId}: see \`pmagent env show ROLE\` (a change is made when a proposal is accepted)`);
    return toChange(row);
  }

  /** The changes of a role's environment (its own and every role's), oldest first; all of them without a role. */
  async list(role?: string): Promise<EnvironmentChange[]> {
    const rows = role
      ? await this.o.store.all<Row>("SELECT * FROM lattice_env_changes WHERE project_id = ? AND applies_to IN (?, '*') ORDER BY applied_ms, id", [this.o.projectId, role])
      : await this.o.store.all<Row>("SELECT * FROM lattice_env_changes WHERE project_id = ? ORDER BY applied_ms, id", [this.o.projectId]);
    return rows.map(toChange);
  }

  /** A human undoes an applied change: its tools are removed and later runs no longer get it. */
  async undo(id: string, actor: string): Promise<EnvironmentChange> {
    this.o.proposals.requireHuman(actor, "undo an environment change");
    const c = await this.get(id);
    if (c.status === "undone") throw new ConflictError("change_undone", `environment change ${c.id} (proposal ${c.proposal_id}) was already undone by ${c.undone_by ?? "?"} at ${c.undone_at ?? "?"}`);
    if (c.status === "failed") throw new ConflictError("change_not_applied", `environment change ${c.id} (proposal ${c.proposal_id}) failed and was never applied (${c.reason ?? "no reason"}): nothing to undo`);
    const at = new Date((this.o.clock ?? Date.now)()).toISOString();
    const r = await this.o.store.run("UPDATE lattice_env_changes SET status = 'undone', undone_by = ?, undone_at = ? WHERE id = ? AND status = 'applied'", [actor, at, c.id]);
    if (r.changes === 0) throw new ConflictError("change_undone", `environment change ${c.id} was undone by someone else meanwhile`);
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
export async function roleEnvironment(proposals: ProposalStore, role: string, changes?: EnvironmentChanges): Promise<RoleEnvironment> {
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
  if (env.adjustments.length > 0) env.env.PMAGENT_ENVIRONMENT = JSON.stringify(env.adjustments.map((a) => ({ type: a.type, details: a.details })));
  return env;
}
