import { z } from "zod";
import { KernelModeSchema, type OADiagnostic } from "../schemas.js";
import {
  GuardFailureInterpreterInputSchema,
  GuardFailureInterpreterOutputSchema,
  ProgramInputsSchemas,
  type GuardFailureInterpreterInput,
  type GuardFailureInterpreterOutput,
} from "./io.js";
import { PROGRAM_TOOL_IDS } from "../tool-ids.js";
import type { ProgramDefinition } from "./types.js";

/**
 * A diagnostic report in the catalog's shape, from pmagent's guard or the origin's
 * guard_oa_state.py (which has no kernel_mode and may leave out type, details or remediation).
 */
const CatalogReportSchema = z.looseObject({
  ok: z.boolean(),
  kernel_mode: KernelModeSchema.optional(),
  diagnostics: z.array(
    z.looseObject({
      category: z.string(),
      severity: z.enum(["info", "warn", "error", "block"]),
      message: z.string(),
      remediation: z.string().nullable().optional(),
    }),
  ),
});

/** Most fundamental first: a missing file explains a schema problem, which explains a mismatch. */
const PRIORITY: OADiagnostic["category"][] = [
  "missing_surface",
  "schema_violation",
  "tri_surface_incoherence",
  "kernel_mismatch",
  "config_drift",
];
/** Failures a fresh snapshot clears: STATE.json lagging behind the kernel. */
const STALE_ONLY: OADiagnostic["category"][] = ["kernel_mismatch", "config_drift"];
const TRANSIENT_TEXT =
  /\b(time ?out|timed out|temporar\w*|ECONNRESET|ECONNREFUSED|ETIMEDOUT|rate limit\w*|unavailable|try again|503)\b/i;
const CONFIRM = "re-run `pmagent oa guard --mode STRICT` and confirm it reports ok";

/** GuardFailureInterpreter: the root cause of a guard's failure and a plan to remediate it. */
export function interpretGuardFailure(input: GuardFailureInterpreterInput): GuardFailureInterpreterOutput {
  const rerunPassed = input.rerun?.ok === true;
  const oa = CatalogReportSchema.safeParse(input.guard_output);
  if (oa.success) {
    const errors = oa.data.diagnostics.filter((d) => d.severity === "error" || d.severity === "block");
    const relevant = errors.length > 0 ? errors : oa.data.diagnostics;
    if (relevant.length === 0) {
      return {
        root_cause: `no failure: the guard reported ok${oa.data.kernel_mode ? ` with kernel mode ${oa.data.kernel_mode}` : ""}`,
        remediation_plan: [],
        is_transient: false,
      };
    }
    const rank = (c: string) =>
      PRIORITY.includes(c as OADiagnostic["category"])
        ? PRIORITY.indexOf(c as OADiagnostic["category"])
        : PRIORITY.length;
    const sorted = [...relevant].sort((a, b) => rank(a.category) - rank(b.category));
    const first = sorted[0]!;
    const more = sorted.length > 1 ? ` (and ${sorted.length - 1} more diagnostic${sorted.length > 2 ? "s" : ""})` : "";
    const plan = [
      ...new Set(sorted.map((d) => d.remediation).filter((r): r is string => typeof r === "string" && r !== "")),
    ];
    return {
      root_cause: `${first.category}: ${first.message}${more}`,
      remediation_plan: [...plan, CONFIRM],
      is_transient:
        rerunPassed ||
        (errors.length > 0 && errors.every((d) => STALE_ONLY.includes(d.category as OADiagnostic["category"]))),
    };
  }
  const problems = genericProblems(input.guard_output);
  const name = input.guard_name ?? "the guard";
  if (problems.length === 0) {
    return {
      root_cause: `${name} reported a failure without saying why (no errors, failures, issues or message field)`,
      remediation_plan: [`run ${name} by hand and read its full output`, CONFIRM],
      is_transient: rerunPassed,
    };
  }
  return {
    root_cause: `${name} failed: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`,
    remediation_plan: [...problems.map((p) => `resolve: ${p}`), `re-run ${name} and confirm it passes`],
    is_transient: rerunPassed || problems.every((p) => TRANSIENT_TEXT.test(p)),
  };
}

/** Problem lines of any guard's JSON: `errors`/`failures`/`issues`/`problems` lists, or `message`/`error`. */
function genericProblems(output: unknown): string[] {
  if (output === null || typeof output !== "object" || Array.isArray(output)) return [];
  const o = output as Record<string, unknown>;
  const out: string[] = [];
  for (const key of ["errors", "failures", "issues", "problems", "mismatches", "missing_surfaces"]) {
    const list = o[key];
    if (!Array.isArray(list)) continue;
    for (const item of list) out.push(typeof item === "string" ? item : describeItem(item));
  }
  for (const key of ["error", "message", "reason"])
    if (out.length === 0 && typeof o[key] === "string") out.push(o[key] as string);
  return out.filter((s) => s.length > 0);
}

function describeItem(item: unknown): string {
  if (item !== null && typeof item === "object") {
    const r = item as Record<string, unknown>;
    for (const key of ["message", "error", "reason", "name", "check"])
      if (typeof r[key] === "string") return r[key] as string;
  }
  return JSON.stringify(item);
}

export const guardFailureInterpreter: ProgramDefinition<GuardFailureInterpreterInput, GuardFailureInterpreterOutput> = {
  id: "GuardFailureInterpreter",
  tools: PROGRAM_TOOL_IDS.GuardFailureInterpreter,
  inputSchema: GuardFailureInterpreterInputSchema,
  outputSchema: GuardFailureInterpreterOutputSchema,
  async gather(ctx) {
    const kernel = ctx.kernel;
    const inputs = ProgramInputsSchemas.GuardFailureInterpreter.parse(ctx.envelope.inputs);
    let rerun: GuardFailureInterpreterInput["rerun"] = null;
    if (inputs.guard_name !== null) {
      // Re-running the named guard tells a transient failure from a standing one.
      const run = (await ctx.tool("oa.guard.run", [inputs.guard_name])) as { exit_code: number; output: unknown };
      const ok =
        run.output !== null && typeof run.output === "object" && "ok" in run.output
          ? (run.output as { ok: unknown }).ok === true
          : run.exit_code === 0;
      rerun = { exit_code: run.exit_code, ok };
    }
    return { guard_name: inputs.guard_name, guard_output: inputs.guard_output, kernel_state: kernel, rerun };
  },
  rules: interpretGuardFailure,
  decision: (o) => (o.remediation_plan.length === 0 ? "NO_FAILURE" : o.is_transient ? "TRANSIENT" : "PERSISTENT"),
  rationale: (o) => o.root_cause,
};
