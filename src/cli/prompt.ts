import type { Command } from "./commander.js";
import { basename, extname } from "node:path";
import { z } from "zod";
import { UsageError, parseJsonText, parseWith } from "../core/index.js";
import { ModelSchema, findConfig, loadProject, type Project } from "../config/index.js";
import {
  HistoryMessageSchema,
  PRESET_NAMES,
  REVIEW_LEVELS,
  AGENT_ROLES,
  buildResponsesRequest,
  loadTemplates,
  outputSchemaFromJson,
  parsePresetName,
  parseReviewLevel,
  parseAgentRole,
  roleTools,
  type HistoryMessage,
  type KnownLedger,
  type OutputSchema,
  type PresetName,
  type ResponsesPayload,
  type ReviewLevel,
  type AgentRole,
} from "../prompt/index.js";
import { globalOptions } from "./context.js";
import { formatOption, intOption, print, readInput, type Format } from "./output.js";

interface BuildFlags {
  role: AgentRole;
  input?: string;
  preset?: PresetName;
  schema?: string;
  structured?: boolean;
  reviewLevel?: ReviewLevel;
  entryId?: string;
  lane?: string;
  cycle?: number;
  ref?: string[];
  turnContext?: string;
  userInstructions?: string;
  environmentContext?: string;
  history?: string;
  model?: string;
  format: Format;
}

export function registerPrompt(program: Command): void {
  const prompt = program
    .command("prompt")
    .description("the chat-codex prompt contract: build the Responses API request a role agent sends");
  prompt
    .command("templates")
    .description(
      "list the prompt templates in effect: the package's, or the project's override under .pmagent/prompts/",
    )
    .addOption(formatOption())
    .action((flags: { format: Format }, cmd: Command) => {
      const t = loadTemplates({ projectRoot: currentProject(cmd)?.root });
      const files = [t.base, ...AGENT_ROLES.map((r) => t.developer[r])].map(({ name, origin, path }) => ({
        name,
        origin,
        path,
      }));
      print(flags.format, files, () =>
        files.map((f) => `${f.name.padEnd(20)} ${f.origin.padEnd(8)} ${f.path}`).join("\n"),
      );
    });
  prompt
    .command("build")
    .description("print the Responses API payload for a role (a dry run: nothing is sent)")
    .requiredOption("--role <role>", `agent role: ${AGENT_ROLES.join(", ")}`, parseAgentRole)
    .option("--input <text>", "the current user input, sent last")
    .option(
      "--preset <preset>",
      `output schema preset: ${PRESET_NAMES.join(", ")} (none turns structured output off; --schema beats it)`,
      parsePresetName,
    )
    .option("--schema <file>", "explicit output schema: a strict JSON Schema file (beats --preset and --structured)")
    .option("--structured", "use the role's default output schema when neither --schema nor --preset is given")
    .option(
      "--review-level <level>",
      `reviewer only: ${REVIEW_LEVELS.join(", ")} (default hard_gate)`,
      parseReviewLevel,
    )
    .option("--entry-id <id>", "ledger: the blackboard entry the agent runs for")
    .option("--lane <lane>", "ledger: the lane, layer/name")
    .option("--cycle <n>", "ledger: the cycle number (from 1)", intOption("--cycle", 1))
    .option("--ref <ref>", "ledger: an earlier artifact (repeatable)", (value: string, previous: string[] = []) => [
      ...previous,
      value,
    ])
    .option("--turn-context <text>", "turn context block (developer zone)")
    .option("--user-instructions <text>", "user instructions block (user zone)")
    .option("--environment-context <text>", "environment context block (user zone)")
    .option("--history <file>", "earlier conversation: a JSON array of {role, content} messages ('-' for stdin)")
    .option("--model <model>", "model name (default: model.model in pmagent.config.json, else gpt-4.1-mini)")
    .addOption(formatOption("json"))
    .action(async (flags: BuildFlags, cmd: Command) => {
      if (flags.preset !== undefined && flags.schema !== undefined) {
        // The contract's precedence (explicit > preset > role default) decides; say which one lost.
        process.stderr.write(
          `pmagent: note: --schema ${flags.schema} takes precedence over --preset ${flags.preset} (explicit schema > preset > role default)\n`,
        );
      }
      if (flags.reviewLevel !== undefined && flags.role !== "reviewer") {
        throw new UsageError(
          "conflicting_options",
          `--review-level applies to the reviewer role only, not to ${flags.role}`,
        );
      }
      const explicit = flags.schema === undefined ? undefined : await schemaFile(flags.schema);
      if (explicit?.note !== undefined) process.stderr.write(`pmagent: note: ${explicit.note}\n`);
      const project = currentProject(cmd);
      const modelSection = ModelSchema.parse(project?.config.model ?? {});
      const payload = buildResponsesRequest({
        role: flags.role,
        model: flags.model ?? modelSection.model,
        request: modelSection.request,
        templates: loadTemplates({ projectRoot: project?.root }),
        ledger: ledgerFrom(flags),
        reviewLevel: flags.reviewLevel,
        turnContext: flags.turnContext,
        userInstructions: flags.userInstructions,
        environmentContext: flags.environmentContext,
        history: flags.history === undefined ? undefined : await historyFile(flags.history),
        input: flags.input,
        responsesOutputSchema: explicit,
        responsesOutputSchemaPreset: flags.preset,
        responsesStructuredOutput: flags.structured === true,
        // What the role agent offers: the orchestrator's edit tools.
        tools: roleTools(flags.role),
      });
      print(flags.format, payload, () => renderPayload(payload));
    });
}

/** The project when there is one (--config, or found walking up); prompts work without one too. */
function currentProject(cmd: Command): Project | undefined {
  const configPath = globalOptions(cmd).config ?? findConfig(process.cwd());
  return configPath === undefined ? undefined : loadProject({ configPath });
}

/** What the flags tell of the ledger; the block states the rest as `(none)`. */
function ledgerFrom(flags: BuildFlags): KnownLedger {
  return { entry_id: flags.entryId, lane: flags.lane, role: flags.role, cycle: flags.cycle, refs: flags.ref ?? [] };
}

async function historyFile(file: string): Promise<HistoryMessage[]> {
  const source = file === "-" ? "--history (standard input)" : file;
  return parseWith(z.array(HistoryMessageSchema), parseJsonText(await readInput(file), source), source);
}

/** A `--schema FILE`: its `title` names the format when it is a valid name, else the file name does. */
async function schemaFile(file: string): Promise<OutputSchema> {
  const json = parseJsonText(await readInput(file), file);
  const title = (json as { title?: unknown } | null)?.title;
  const name =
    typeof title === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(title)
      ? title
      : basename(file, extname(file))
          .replace(/[^A-Za-z0-9_-]/g, "_")
          .slice(0, 64) || "output";
  return outputSchemaFromJson(name, json, file);
}

function renderPayload(payload: ResponsesPayload): string {
  const lines = [`model: ${payload.model}`, "", "== instructions", payload.instructions ?? ""];
  for (const item of payload.input) {
    const m = item as { role?: string; content?: unknown };
    lines.push(
      "",
      `== ${m.role ?? "item"}`,
      typeof m.content === "string" ? m.content : JSON.stringify(m.content, null, 2),
    );
  }
  const tools = (payload.tools ?? []).map((t) => ("name" in t ? t.name : t.type));
  lines.push("", `== tools: ${tools.length > 0 ? tools.join(", ") : "none"}`);
  const format = payload.text?.format;
  lines.push("", `== output schema: ${format?.type === "json_schema" ? `${format.name} (strict)` : "none"}`);
  if (format?.type === "json_schema") lines.push(JSON.stringify(format.schema, null, 2));
  return lines.join("\n");
}
