import { existsSync } from "node:fs";
import type { Config } from "../config/index.js";
import type { ReasoningModel } from "./model.js";
import { reasoningEngine } from "./prompt-model.js";
import type { SafeOPSDecisionOutput } from "./programs/io.js";
import { buildEnvelope, run } from "./reasoning.js";
import { REQUIRED_SURFACES, surfacePath } from "./surfaces.js";
import { oaWorkspace } from "./workspace.js";

/** The blackboard entry a run is about to start for (only what the gate reads). */
export interface GateEntry {
  id: string;
  kind: string;
  title?: string;
}

export interface GateRunArgs {
  root: string;
  config: Config;
  role: string;
  entry: GateEntry;
  /** Default: the configured model when `model` is set and its key is present, else the rules. */
  model?: ReasoningModel;
  /** Where the model key is looked up (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export type GateDecision = SafeOPSDecisionOutput & {
  skipped: false;
  envelope_id: string;
  status: "OK" | "DEGRADED" | "BLOCKED" | "FAILED";
  engine: "rules" | "model";
};
export type GateResult = GateDecision | { skipped: true; reason: string };

/** The action SafeOPSDecision judges for a run: role, entry kind, id and title. */
export function gateAction(role: string, entry: GateEntry): string {
  return `${role} runs ${entry.kind} (entry ${entry.id})${entry.title ? `: ${entry.title}` : ""}`;
}

/**
 * Asked by the supervisor before it starts a run. DENY: leave the entry open and record
 * `reasoning`; CONDITIONAL: start it with `conditions` in the run's record. Skipped when the gate
 * is off (`oa.gate: false`) or the project has no OA surfaces. A BLOCKED kernel denies all but
 * diagnostic runs; a failed program is a DENY (fail-closed). A DENY says how to lift it.
 */
export async function gateRun(args: GateRunArgs): Promise<GateResult> {
  if (!args.config.oa.gate) return { skipped: true, reason: "the OA gate is off (oa.gate is false)" };
  const ws = oaWorkspace(args.root, args.config.oa);
  if (!REQUIRED_SURFACES.some((n) => existsSync(surfacePath(ws, n)))) {
    return { skipped: true, reason: `no OA kernel surfaces in ${args.config.oa.surfaces_dir}/` };
  }
  const envelope = buildEnvelope("SafeOPSDecision", gateAction(args.role, args.entry), { workspace: ws });
  const model = args.model ?? reasoningEngine(args.config, args.root, args.env).model;
  const result = await run(envelope, { workspace: ws, model });
  if (result.status === "FAILED") {
    return {
      skipped: false,
      envelope_id: result.envelope_id,
      status: result.status,
      engine: result.engine,
      decision: "DENY",
      reasoning: `SafeOPSDecision failed: ${result.rationale}. ${liftHint(args.config.oa.surfaces_dir)}`,
      conditions: [],
      warnings: result.diagnostics.filter((d) => d.severity !== "error").map((d) => d.message),
    };
  }
  const output = result.output as SafeOPSDecisionOutput;
  const reasoning =
    output.decision === "DENY" ? `${output.reasoning} ${liftHint(args.config.oa.surfaces_dir)}` : output.reasoning;
  return {
    skipped: false,
    envelope_id: result.envelope_id,
    status: result.status,
    engine: result.engine,
    ...output,
    reasoning,
  };
}

/** How a human lifts a DENY: read what the kernel says, fix it, or turn the gate off. */
export function liftHint(surfacesDir: string): string {
  return `To lift: run \`pmagent oa guard\` and \`pmagent boot oa\` to see why, fix the kernel surfaces in ${surfacesDir}/ (the run is retried once they allow it), or set "oa": {"gate": false} in pmagent.config.json to stop gating runs.`;
}
