import { Option, type Command } from "./commander.js";
import { UsageError, parseJsonText, plural } from "../core/index.js";
import {
  bootEnvelope,
  bootExitCode,
  buildEnvelope,
  callOATool,
  completeOpsBlock,
  initSurfaces,
  oaWorkspace,
  reasoningEngine,
  runReasoning,
  runOaGuard,
  writeSnapshot,
  OA_TOOL_IDS,
  REGISTRY_GUARDS,
  type OAGuardMode,
  type OAGuardOutput,
  type OAGuardRun,
  type OAWorkspace,
  type OPSBlockGeneratorOutput,
  type ReasoningEngine,
  type ReasoningResult,
} from "../oa/index.js";
import { project } from "./context.js";
import { formatOption, print, readInput, type Format } from "./output.js";

async function workspace(cmd: Command): Promise<OAWorkspace> {
  const p = await project(cmd);
  return oaWorkspace(p.root, p.config.oa);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseHint(value: string): { flow_id: string; hint: string } {
  const at = value.indexOf("=");
  if (at <= 0 || at === value.length - 1)
    throw new UsageError(
      "invalid_option",
      `--hint expects FLOW_ID=TEXT (e.g. docs.create="Always update AGENTS.md"), got "${value}"`,
    );
  return { flow_id: value.slice(0, at), hint: value.slice(at + 1) };
}

/** The project's OA workspace and the engine its reasoning programs run on (model or rules). */
async function reasoningSetup(cmd: Command): Promise<{ ws: OAWorkspace; engine: ReasoningEngine }> {
  const p = await project(cmd);
  return { ws: oaWorkspace(p.root, p.config.oa), engine: reasoningEngine(p.config, p.root) };
}

function renderResult(r: ReasoningResult, body: string[], engine: ReasoningEngine): string {
  const lines = [`${r.program_id}: ${r.decision} (status ${r.status}, engine: ${engine.reason})`, ...body];
  for (const d of r.diagnostics) lines.push(`[${d.severity}] ${d.message}`);
  return lines.join("\n");
}

/** Programs that ran print their result and exit 0 (in every kernel mode); FAILED ones exit 1. */
function resultExit(r: ReasoningResult, extraFailure = false): void {
  if (r.status === "FAILED" || extraFailure) process.exitCode = 1;
}

function renderGuard(g: OAGuardOutput): string {
  const lines = [
    `${g.ok ? "PASS" : "FAIL"} (${g.mode}) — kernel ${g.kernel_mode}, ${plural(g.diagnostics.length, "diagnostic")}`,
  ];
  for (const d of g.diagnostics) lines.push(`[${d.severity}] ${d.category}: ${d.message}`, `    fix: ${d.remediation}`);
  return lines.join("\n");
}

/** A tool's result for a person: a guard run as its text and verdict, any other result field by field. */
function renderTool(id: string, result: unknown): string {
  if (id === "oa.guard.run") {
    const run = result as OAGuardRun;
    const ok = (run.output as { ok?: unknown } | null)?.ok;
    return [
      `guard ${run.guard}: exit ${run.exit_code}${typeof ok === "boolean" ? ` (${ok ? "PASS" : "FAIL"})` : ""}`,
      ...(run.text ?? []).map((l) => `  ${l}`),
      `JSON: ${JSON.stringify(run.output)}`,
    ].join("\n");
  }
  if (result === null || typeof result !== "object") return JSON.stringify(result);
  return Object.entries(result as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join("\n");
}

export function registerOa(program: Command): void {
  const oa = program
    .command("oa")
    .description(
      "Orchestrator Assistant: read kernel surfaces, guard their coherence, run reasoning programs (read-only)",
    );

  oa.command("init")
    .description(
      "first run: write a starting set of kernel surfaces derived from this repository (branch from git, phase from oa.phase, reality from oa.checks or package.json's test script) and the first STATE.json; never overwrites surfaces it did not write",
    )
    .option("--branch <name>", "the branch (default: git's current branch)")
    .option("--phase <phase>", "the phase (default: oa.phase in pmagent.config.json, else 1)")
    .addOption(formatOption())
    .action(async (opts: { branch?: string; phase?: string; format: Format }, cmd: Command) => {
      const result = await initSurfaces(await workspace(cmd), { branch: opts.branch, phase: opts.phase });
      print(opts.format, result, () =>
        [
          `wrote ${result.written.join(", ")} and ${result.state}`,
          `branch ${result.branch}, phase ${result.phase}, reality ${result.reality_green ? "green" : "not green"}`,
          ...result.checks.map((c) => `  ${c.passed ? "pass" : "FAIL"} ${c.name}: ${c.message}`),
          "next: pmagent boot oa",
        ].join("\n"),
      );
    });

  oa.command("snapshot")
    .description(
      "regenerate share/orchestrator_assistant/STATE.json from the kernel surfaces (exit 1: a required surface is missing or invalid)",
    )
    .addOption(formatOption())
    .action(async (opts: { format: Format }, cmd: Command) => {
      const result = writeSnapshot(await workspace(cmd));
      const s = result.state;
      print(
        opts.format,
        result,
        () =>
          `wrote ${result.path}: branch ${s.branch}, phase ${s.current_phase}, reality ${s.reality_green ? "green" : "red"}, mode ${s.kernel_mode}`,
      );
    });

  oa.command("guard")
    .description(
      "check STATE.json against the kernel surfaces and the surfaces against each other (HINT by default: report only; exit 1 only in STRICT mode on failure)",
    )
    .addOption(
      new Option("--mode <mode>", "STRICT fails (exit 1) on any error diagnostic; HINT only reports")
        .choices(["STRICT", "HINT"])
        .default("HINT"),
    )
    .addOption(formatOption())
    .action(async (opts: { mode: OAGuardMode; format: Format }, cmd: Command) => {
      const output = runOaGuard(await workspace(cmd), opts.mode);
      print(opts.format, output, () => renderGuard(output));
      if (opts.mode === "STRICT" && !output.ok) process.exitCode = 1;
    });

  oa.command("tool")
    .description(
      `call one read-only OA tool and print its result, JSON by default (${OA_TOOL_IDS.join(", ")}); oa.guard.run takes a guard name (the registry's guards: ${REGISTRY_GUARDS.join(", ")})`,
    )
    .argument("<id>", "tool id")
    .argument("[arg]", "the guard name for oa.guard.run")
    .addOption(formatOption("json"))
    .action(async (id: string, arg: string | undefined, opts: { format: Format }, cmd: Command) => {
      const result = await callOATool(await workspace(cmd), id, arg === undefined ? [] : [arg]);
      print(opts.format, result, () => renderTool(id, result));
    });

  oa.command("decision")
    .description(
      "SafeOPSDecision: may this action run now? ALLOW, DENY or CONDITIONAL (a BLOCKED kernel allows diagnosis only; exit 1 when the program failed)",
    )
    .requiredOption("--action <text>", "the proposed action")
    .addOption(formatOption())
    .action(async (opts: { action: string; format: Format }, cmd: Command) => {
      const { ws, engine } = await reasoningSetup(cmd);
      const result = await runReasoning(buildEnvelope("SafeOPSDecision", opts.action, { workspace: ws }), {
        workspace: ws,
        model: engine.model,
      });
      const o = result.output as { conditions: string[]; warnings: string[] } | null;
      print(opts.format, result, () =>
        renderResult(
          result,
          [
            result.rationale,
            ...(o?.conditions ?? []).map((c) => `condition: ${c}`),
            ...(o?.warnings ?? []).map((w) => `warning: ${w}`),
          ],
          engine,
        ),
      );
      resultExit(result);
    });

  oa.command("generate")
    .description(
      "OPSBlockGenerator: an OPS block (Goal, Commands, Evidence to return, Next gate) for a goal; records it in share/oa/CONTEXT.json",
    )
    .requiredOption("--goal <text>", "what the OPS block should achieve")
    .option(
      "--ref <path>",
      "an SSOT document the block must follow (repeatable; default: the SSOT surface's references)",
      collect,
      [],
    )
    .option("--hint <flow=text>", "a flow hint, FLOW_ID=TEXT (repeatable)", collect, [])
    .addOption(formatOption())
    .action(async (opts: { goal: string; ref: string[]; hint: string[]; format: Format }, cmd: Command) => {
      const { ws, engine } = await reasoningSetup(cmd);
      const inputs = { hints: opts.hint.map(parseHint), ...(opts.ref.length > 0 ? { ssot_references: opts.ref } : {}) };
      const result = await runReasoning(buildEnvelope("OPSBlockGenerator", opts.goal, { workspace: ws, inputs }), {
        workspace: ws,
        model: engine.model,
      });
      const o = result.output as OPSBlockGeneratorOutput | null;
      // The block itself stays clean on stdout (it is pasted as is); the engine goes to stderr.
      if (o && opts.format === "text") process.stderr.write(`OPSBlockGenerator engine: ${engine.reason}\n`);
      print(opts.format, result, () => (o ? o.ops_block : renderResult(result, [result.rationale], engine)));
      resultExit(result);
    });

  oa.command("ops-done")
    .description("mark a pending OPS block (from `pmagent oa generate`) done: remove it from share/oa/CONTEXT.json")
    .argument("<id>", "the block's id (the generate run's envelope_id)")
    .addOption(formatOption())
    .action(async (id: string, opts: { format: Format }, cmd: Command) => {
      const result = completeOpsBlock(await workspace(cmd), id);
      print(opts.format, result, () => `OPS block ${result.completed} done; ${result.pending} still pending`);
    });

  oa.command("interpret")
    .description(
      "GuardFailureInterpreter: root cause and remediation plan of a guard's JSON output (FILE, or - for standard input)",
    )
    .argument("<file>", "the guard's JSON output, or - to read standard input")
    .option("--guard <name>", "the registered guard that produced it (re-run to tell transient failures)")
    .addOption(formatOption())
    .action(async (file: string, opts: { guard?: string; format: Format }, cmd: Command) => {
      const source = file === "-" ? "standard input" : file;
      const text = await readInput(file);
      if (text.trim() === "")
        throw new UsageError(
          "invalid_json",
          `${source} is empty: pass a guard's JSON output (e.g. pmagent oa guard --mode HINT --format json | pmagent oa interpret -)`,
        );
      const guardOutput = parseJsonText(text, source);
      const { ws, engine } = await reasoningSetup(cmd);
      const inputs = { guard_output: guardOutput, guard_name: opts.guard ?? null };
      const result = await runReasoning(
        buildEnvelope("GuardFailureInterpreter", `interpret the output of ${opts.guard ?? source}`, {
          workspace: ws,
          inputs,
        }),
        { workspace: ws, model: engine.model },
      );
      const o = result.output as { remediation_plan: string[]; is_transient: boolean } | null;
      print(opts.format, result, () =>
        renderResult(
          result,
          [
            `root cause: ${result.rationale}`,
            ...(o
              ? [`transient: ${o.is_transient ? "yes" : "no"}`, ...o.remediation_plan.map((s, i) => `${i + 1}. ${s}`)]
              : []),
          ],
          engine,
        ),
      );
      resultExit(result);
    });

  oa.command("validate-phase")
    .description("PhaseTransitionValidator: is the project ready to move to phase N? (exit 1 when NOT_READY or failed)")
    .requiredOption("--to <phase>", "the target phase, e.g. 28")
    .addOption(formatOption())
    .action(async (opts: { to: string; format: Format }, cmd: Command) => {
      const { ws, engine } = await reasoningSetup(cmd);
      const result = await runReasoning(
        buildEnvelope("PhaseTransitionValidator", `transition to phase ${opts.to}`, {
          workspace: ws,
          inputs: { target_phase: opts.to },
        }),
        { workspace: ws, model: engine.model },
      );
      const o = result.output as { missing_criteria: string[] } | null;
      print(opts.format, result, () =>
        renderResult(
          result,
          (o?.missing_criteria ?? []).map((m) => `missing: ${m}`),
          engine,
        ),
      );
      resultExit(result, result.decision === "NOT_READY");
    });
}

export function registerBoot(program: Command): void {
  const boot = program.command("boot").description("boot an assistant session");
  boot
    .command("oa")
    .description(
      "print the OA boot envelope: kernel phase, branch and mode, and what the mode allows (exit 3 when the kernel is BLOCKED)",
    )
    .addOption(formatOption())
    .action(async (opts: { format: Format }, cmd: Command) => {
      const envelope = bootEnvelope(await workspace(cmd));
      const e = envelope.oa_boot_envelope;
      print(opts.format, envelope, () =>
        [
          `OA session ${e.session_metadata.session_id} in ${e.session_metadata.workspace}`,
          `kernel: phase ${e.kernel.phase ?? "unknown"}, branch ${e.kernel.branch ?? "unknown"}, mode ${e.kernel.mode}`,
          ...e.interpretation.reasons.map((r) => `  because ${r}`),
          `allowed: ${e.interpretation.allowed_actions.join(", ") || "(none)"}`,
          `forbidden: ${e.interpretation.forbidden_actions.join(", ") || "(none)"}`,
          `next: ${e.interpretation.recommended_commands.join(" · ")}`,
        ].join("\n"),
      );
      process.exitCode = bootExitCode(envelope);
    });
}
