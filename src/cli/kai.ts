import type { Command } from "./commander.js";
import { UsageError, isIsoWithZone, parseDateInput } from "../core/index.js";
import { answerText, modelDigest, polishSummary, type KaiResponse } from "../kai/index.js";
import type { Project } from "../config/index.js";
import { formatOption, intOption, readInput, type Format } from "./output.js";
import { project, withProject } from "./context.js";

interface KaiFlags {
  polish?: boolean;
  modelDigest?: boolean;
  repo?: string;
  asOf?: string;
  format: Format;
}

function commonOptions(cmd: Command): Command {
  return (
    cmd
      .option("--repo <dir>", "repository to read git history and the STATE document from (default: the project's)")
      .option(
        "--as-of <date>",
        "answer as of this time (ISO 8601; a bare date means 00:00 UTC): later evidence is ignored",
      )
      .option("--polish", "let the configured model reword summary_md (the payload never changes)")
      .option(
        "--model-digest",
        "changes: let the configured model write the highlights from Kai's themes, each citing its evidence (Kai's own stay on any failure)",
      )
      // json by default: the answer is a document (kai_response_v1); text is its summary_md.
      .addOption(formatOption("json", { markdown: true }))
  );
}

function asOf(flags: KaiFlags): string | undefined {
  if (flags.asOf === undefined) return undefined;
  // A time written with its zone is passed on as written: its offset is the zone the window's days are counted in.
  return isIsoWithZone(flags.asOf) ? flags.asOf : parseDateInput(flags.asOf, "--as-of").toISOString();
}

/**
 * Print the response; an error response (a bad request) exits 2 like any usage error, its notes
 * on stderr as every command's errors are (JSON under --format json).
 */
function emit(response: KaiResponse, format: Format): void {
  process.stdout.write(format === "json" ? `${JSON.stringify(response, null, 2)}\n` : `${response.summary_md}\n`);
  if (response.status === "error") {
    if (format === "json")
      process.stderr.write(
        `${JSON.stringify({ error: { code: "kai_request_invalid", message: response.notes.join("; ") } })}\n`,
      );
    else process.stderr.write(`${response.notes.map((n) => `pmagent: ${n}`).join("\n")}\n`);
    process.exitCode = 2;
  }
}

function parseLane(value: string): { layer: string; name: string } {
  const m = /^([^/\s]+)\/([^/\s]+)$/.exec(value);
  if (!m) throw new UsageError("invalid_option", `--lane expects LAYER/NAME (e.g. layer_b/doc_update), got "${value}"`);
  return { layer: m[1]!, name: m[2]! };
}

/** A request as the CLI sends it; the same checks as any other request apply. */
function cliRequest(
  p: Project,
  type: "lane_status" | "what_changed",
  lane: { layer: string; name: string } | undefined,
  params: Record<string, unknown>,
  projectId?: string,
): string {
  const first = p.config.lanes[0]!;
  return JSON.stringify({
    version: "kai_request_v1",
    request_id: `cli-${new Date().toISOString()}`,
    from: { actor_type: "human", actor_id: "pmagent-cli" },
    project_id: projectId ?? p.config.project_id,
    type,
    lane: lane ?? { layer: first.layer, name: first.name },
    params,
  });
}

async function run(cmd: Command, text: string, flags: KaiFlags): Promise<void> {
  // The model settings are checked first: --polish or --model-digest without a key is a usage error, not a late surprise.
  // The model client (openai) only when asked for one of them.
  const model =
    flags.polish || flags.modelDigest
      ? (await import("../prompt/index.js")).ModelClient.fromConfig((await project(cmd)).config.model)
      : undefined;
  let response = await withProject(cmd, async (o) =>
    answerText(text, { config: o.config, sources: await o.kaiSources({ repo: flags.repo }) }),
  );
  // The model writes the highlights first, so that a polish rewords the digest they end up in.
  if (model && flags.modelDigest) response = await modelDigest(model, response);
  if (model && flags.polish) response = await polishSummary(model, response);
  emit(response, flags.format);
}

const PROJECT_HELP =
  "project to answer about: the configured one (default) or another living in the repository (with its own STATE/<id>/current_state.md)";

export function registerKai(program: Command): void {
  const kai = program
    .command("kai")
    .description("Kai: lane status and what changed, as kai_response_v1 JSON with a short Markdown digest");

  commonOptions(
    kai
      .command("ask")
      .argument("<file>", "a kai_request_v1 JSON file, or - for standard input")
      .description("answer a full kai_request_v1"),
  ).action(async (file: string, flags: KaiFlags, cmd: Command) => {
    let text = await readInput(file);
    const at = asOf(flags);
    if (at !== undefined) {
      // --as-of overrides params.as_of; a request that is not an object is left for the checks to report.
      try {
        const value = JSON.parse(text) as unknown;
        if (value !== null && typeof value === "object" && !Array.isArray(value)) {
          const request = value as Record<string, unknown>;
          const params =
            request.params !== null && typeof request.params === "object"
              ? (request.params as Record<string, unknown>)
              : {};
          text = JSON.stringify({ ...request, params: { ...params, as_of: at } });
        }
      } catch {
        // invalid JSON: answered below with an error response naming the problem
      }
    }
    await run(cmd, text, flags);
  });

  commonOptions(
    kai
      .command("status")
      .description("lane_status_v1: the latest cycle, each role's step, the STATE view and what to do next"),
  )
    .option("--lane <layer/name>", "lane to report on (default: the first configured lane)")
    .option("--project <id>", PROJECT_HELP)
    .action(async (flags: KaiFlags & { lane?: string; project?: string }, cmd: Command) => {
      const p = await project(cmd);
      const at = asOf(flags);
      await run(
        cmd,
        cliRequest(
          p,
          "lane_status",
          flags.lane === undefined ? undefined : parseLane(flags.lane),
          at === undefined ? {} : { as_of: at },
          flags.project,
        ),
        flags,
      );
    });

  commonOptions(
    kai
      .command("changes")
      .description("what_changed_v1: highlights, workflows, PRs, STATE/docs changes, risks and open questions"),
  )
    .option("--lane <layer/name>", "lane whose cycles and runs count (default: the first configured lane)")
    .option("--days <n>", "time window in days (default 7)", intOption("--days", 1, 365))
    .option("--max <n>", "highlights at most (default 5)", intOption("--max", 1, 50))
    .option("--project <id>", PROJECT_HELP)
    .action(
      async (flags: KaiFlags & { lane?: string; days?: number; max?: number; project?: string }, cmd: Command) => {
        const p = await project(cmd);
        const at = asOf(flags);
        const params = {
          ...(flags.days === undefined ? {} : { time_window_days: flags.days }),
          ...(flags.max === undefined ? {} : { max_highlights: flags.max }),
          ...(at === undefined ? {} : { as_of: at }),
        };
        await run(
          cmd,
          cliRequest(
            p,
            "what_changed",
            flags.lane === undefined ? undefined : parseLane(flags.lane),
            params,
            flags.project,
          ),
          flags,
        );
      },
    );
}
