import { UsageError } from "../../core/index.js";

/** A command the supervisor runs in the workspace (`sh -c`) before the sprite starts (accepted `add_preinstall_step`). */
export interface PreinstallStep {
  proposal_id: string;
  command: string;
}

/** POSIX shell quoting of one argument. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/** What accepted proposals add to a role's later runs. */
export interface RoleEnvironment {
  role: string;
  preinstall: PreinstallStep[];
  /** Variables added to the sprite's environment. */
  env: Record<string, string>;
  /** The accepted adjustments, for the sprite's context (`environment`). */
  adjustments: Array<{ id: string; type: string; details: Record<string, unknown> }>;
  /** Directories put first on the sprite's PATH (after the run's shims): installed or selected tools, the latest first. */
  path: string[];
  /** The sandbox's network for the role's runs, when an accepted adjustment sets it (else the config's `sandbox_network`). */
  network?: "host" | "none";
}

/** An empty environment for a role. */
export function emptyRoleEnvironment(role: string): RoleEnvironment {
  return { role, preinstall: [], env: {}, adjustments: [], path: [] };
}

/** The command that installs a project's dependencies with each dependency manager (PMAGENT_INSTALL_COMMAND). */
export const INSTALL_COMMANDS: Readonly<Record<string, string>> = {
  npm: "npm ci",
  pnpm: "pnpm install --frozen-lockfile",
  yarn: "yarn install --frozen-lockfile",
  bun: "bun install --frozen-lockfile",
  pip: "pip install -r requirements.txt",
  poetry: "poetry install",
  uv: "uv sync",
  cargo: "cargo fetch",
  go: "go mod download",
};

function str(details: Record<string, unknown>, keys: string[], what: string, id: string): string {
  for (const k of keys) {
    const v = details[k];
    if (typeof v === "string" && v.trim()) return v.trim();
    if (typeof v === "number") return String(v);
  }
  throw new UsageError(
    "proposal_details_invalid",
    `environment proposal ${id} (${what}) needs details.${keys[0]} as a non-empty string`,
  );
}

function envName(s: string): string {
  return s
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, "_")
    .replace(/^_|_$/g, "");
}

/**
 * What one accepted adjustment does to later runs of its role:
 * - add_preinstall_step: `details.command` (string or argv) runs in the workspace before the sprite;
 * - runtime_install / runtime_version_adjust: PMAGENT_RUNTIME_<RUNTIME>=<version> (the runner's
 *   setup, or the sprite, picks that runtime);
 * - dependency_manager_switch: PMAGENT_DEPENDENCY_MANAGER=<details.to> and PMAGENT_INSTALL_COMMAND
 *   (details.install_command, else that manager's usual command, see INSTALL_COMMANDS);
 * - adjust_smoke_command: PMAGENT_SMOKE_COMMAND=<details.command>;
 * - add_system_package: PMAGENT_SYSTEM_PACKAGES=<space-separated names>;
 * - enable_network_access: the sandbox's network is the host's for the role's runs
 *   (PMAGENT_NETWORK_ACCESS=enabled, and PMAGENT_NETWORK_HOSTS when named);
 * - escalate_to_human: nothing at run time (it notified the humans when proposed).
 * Every accepted adjustment is also listed in PMAGENT_ENVIRONMENT (JSON) and the run's context.
 * What installing does (runtimes, system packages) is the change applied on acceptance (changes.ts).
 */
/** What of an accepted proposal its adjustment reads (a stored EnvironmentProposal has these). */
export interface AcceptedAdjustment {
  id: string;
  adjustment_type: string;
  details: Record<string, unknown>;
}

export function applyAdjustment(env: RoleEnvironment, p: AcceptedAdjustment): void {
  const d = p.details;
  switch (p.adjustment_type) {
    case "add_preinstall_step": {
      const cmd = d.command;
      if (Array.isArray(cmd) && cmd.length > 0 && cmd.every((c) => typeof c === "string" && c.length > 0))
        env.preinstall.push({ proposal_id: p.id, command: (cmd as string[]).map(shellQuote).join(" ") });
      else if (typeof cmd === "string" && cmd.trim()) env.preinstall.push({ proposal_id: p.id, command: cmd });
      else
        throw new UsageError(
          "proposal_details_invalid",
          `environment proposal ${p.id} (add_preinstall_step) needs details.command: a command string or a non-empty argv array`,
        );
      break;
    }
    case "runtime_install":
    case "runtime_version_adjust": {
      const runtime = str(d, ["runtime", "name"], p.adjustment_type, p.id);
      env.env[`PMAGENT_RUNTIME_${envName(runtime)}`] =
        typeof d.version === "string" || typeof d.version === "number" ? String(d.version) : "latest";
      break;
    }
    case "dependency_manager_switch": {
      const manager = str(d, ["to", "manager", "dependency_manager"], p.adjustment_type, p.id);
      env.env.PMAGENT_DEPENDENCY_MANAGER = manager;
      const install =
        typeof d.install_command === "string" && d.install_command.trim()
          ? d.install_command.trim()
          : INSTALL_COMMANDS[manager];
      if (install) env.env.PMAGENT_INSTALL_COMMAND = install;
      else delete env.env.PMAGENT_INSTALL_COMMAND;
      break;
    }
    case "adjust_smoke_command":
      env.env.PMAGENT_SMOKE_COMMAND = str(d, ["command", "smoke_command"], p.adjustment_type, p.id);
      break;
    case "add_system_package": {
      const list = Array.isArray(d.packages)
        ? d.packages.filter((x): x is string => typeof x === "string" && x.length > 0)
        : [str(d, ["package", "packages", "name"], p.adjustment_type, p.id)];
      const known = env.env.PMAGENT_SYSTEM_PACKAGES?.split(" ") ?? [];
      env.env.PMAGENT_SYSTEM_PACKAGES = [...new Set([...known, ...list])].join(" ");
      break;
    }
    case "enable_network_access": {
      env.env.PMAGENT_NETWORK_ACCESS = "enabled";
      env.network = "host";
      const hosts = Array.isArray(d.hosts) ? d.hosts.filter((x): x is string => typeof x === "string") : [];
      if (hosts.length > 0)
        env.env.PMAGENT_NETWORK_HOSTS = [
          ...new Set([...(env.env.PMAGENT_NETWORK_HOSTS?.split(",") ?? []), ...hosts]),
        ].join(",");
      break;
    }
    case "escalate_to_human":
      break;
    default:
      throw new UsageError(
        "proposal_type_unknown",
        `environment proposal ${p.id} has an unknown adjustment type "${p.adjustment_type}"`,
      );
  }
  env.adjustments.push({ id: p.id, type: p.adjustment_type, details: d });
}
