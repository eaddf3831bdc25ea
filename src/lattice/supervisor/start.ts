/**
 * Starting a run: the gate asked (its answer recorded), the sprite's command chosen, the entry
 * checked, the run recorded and its first attempt launched.
 */
import { join } from "node:path";
import { isTerminal, type StoredEntry } from "../../blackboard/index.js";
import type { RoleConfig } from "../../config/index.js";
import { PmagentError, RefusedError, UsageError, confinePath, randomHex } from "../../core/index.js";
import { runnerArgv } from "../agents/index.js";
import { setRunBudget, type GateDecision, type RunBudget, type RunRecord } from "../runs/index.js";
import { role as roleOf, sandboxTool, track, whenIdle, type SupervisorContext } from "./context.js";
import { launch } from "./launch.js";
import type { StartRunOptions } from "./options.js";

const newRunId = () => `run_${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}_${randomHex(4)}`;

/** Ask the gate (if any) about a run and record its answer; DENY is recorded, not thrown. */
export async function askGate(
  ctx: SupervisorContext,
  role: string,
  entry: StoredEntry | null,
  command: string[],
): Promise<GateDecision | null> {
  const gate = ctx.options.hooks?.gate;
  if (!gate) return null;
  const d = await gate.decide({ role, entry: entry?.entry ?? null, command });
  if (d === null) return null;
  if (!d || !["ALLOW", "DENY", "CONDITIONAL"].includes(d.decision)) {
    throw new PmagentError(
      "gate_invalid",
      `the run gate answered ${JSON.stringify(d?.decision)}; expected ALLOW, DENY or CONDITIONAL`,
    );
  }
  const decision: GateDecision = {
    decision: d.decision,
    reasoning: String(d.reasoning ?? ""),
    conditions: (d.conditions ?? []).map(String),
  };
  await ctx.runs.recordGateDecision(entry?.entry.id ?? "", entry?.version ?? 0, role, decision, null);
  return decision;
}

function commandFor(ctx: SupervisorContext, role: RoleConfig, given: string[] | undefined): string[] {
  const command = given && given.length > 0 ? given : runnerArgv(role.runner, ctx.options.project.config);
  if (!command || command.length === 0) {
    throw new UsageError(
      "no_sprite_command",
      `role ${role.name} has no runner.command or runner.agent in pmagent.config.json: configure one or pass the command after --`,
    );
  }
  return command;
}

/** A run's own budget: positive limits, and a cost limit only with prices to count it by. */
function checkBudget(ctx: SupervisorContext, budget: RunBudget): void {
  for (const [name, flag] of [
    ["max_tokens", "--max-tokens"],
    ["max_cost", "--max-cost"],
  ] as const) {
    const v = budget[name];
    if (v !== undefined && !(Number.isFinite(v) && v > 0 && (name === "max_cost" || Number.isInteger(v)))) {
      throw new UsageError(
        "invalid_budget",
        `${flag} must be a positive ${name === "max_cost" ? "number" : "whole number"}, got ${v}`,
      );
    }
  }
  if (budget.max_cost !== undefined && Object.keys(ctx.options.project.config.prices).length === 0) {
    throw new UsageError(
      "no_prices",
      `--max-cost needs a price table: add "prices": { "<model>": { "input_per_mtok": …, "output_per_mtok": … } } to pmagent.config.json`,
    );
  }
}

/**
 * Start one run and supervise it until nothing more happens here: it finished, or it waits for
 * input with no action of this supervisor still under way. Refused (no run) when the gate denies.
 */
export async function startRun(ctx: SupervisorContext, options: StartRunOptions): Promise<RunRecord> {
  const role = roleOf(ctx, options.role);
  const command = commandFor(ctx, role, options.command);
  if (options.budget) checkBudget(ctx, options.budget);
  sandboxTool(ctx);
  let entry: StoredEntry | null = null;
  if (options.entryId !== undefined) {
    entry = await ctx.board.get(options.entryId);
    if (entry.entry.to !== role.name) {
      throw new RefusedError(
        "entry_not_for_role",
        `entry ${entry.entry.id} is addressed to ${entry.entry.to}, not ${role.name}: run it with --role ${entry.entry.to}`,
      );
    }
    if (isTerminal(entry.entry.status))
      throw new RefusedError(
        "entry_finished",
        `entry ${entry.entry.id} is ${entry.entry.status}: there is nothing left to run`,
      );
  }
  const gate = options.decided ?? (await askGate(ctx, role.name, entry, command));
  if (gate?.decision === "DENY") {
    throw new RefusedError(
      "run_denied",
      `the run gate denied a run of ${role.name}${entry ? ` for entry ${entry.entry.id}` : ""}: ${gate.reasoning || "no reason given"}`,
      {
        decision: gate,
      },
    );
  }
  const root = ctx.options.project.root;
  const id = newRunId();
  const workspace =
    options.workspace !== undefined
      ? confinePath(root, options.workspace, "--workspace")
      : join(root, ".pmagent", "workspaces", id);
  const run = await ctx.runs.create({
    id,
    project_id: ctx.options.project.config.project_id,
    role: role.name,
    entry_id: entry?.entry.id ?? null,
    sprite_id: `sprite-${id.slice(-8)}`,
    work_item_id: entry?.entry.id ?? id,
    command,
    workspace,
    checkpoint_dir: join(root, ".pmagent", "checkpoints", id),
    run_dir: join(root, ".pmagent", "runs", id),
    worker: options.worker ?? null,
    host: ctx.host,
    supervisor_pid: process.pid,
    gate,
  });
  if (options.budget) await setRunBudget(ctx.store, run.id, options.budget);
  options.onStarted?.(run.id);
  const active = track(ctx, run.id);
  active.attempt = launch(ctx, run, {
    fresh: true,
    entry: entry?.entry ?? null,
    timeoutS: options.timeoutS,
    userWorkspace: options.workspace !== undefined,
  });
  return whenIdle(ctx, run.id);
}
