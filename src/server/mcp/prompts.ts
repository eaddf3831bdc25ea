import { MAX_PAGE_LIMIT, type Page } from "../../store/index.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { StoredEntry } from "../../blackboard/index.js";
import type { EnvironmentProposal, RunRecord } from "../../lattice/index.js";
import { assertMayActOnRun } from "../permissions.js";
import { entryLine } from "./entries.js";
import { proposalLine } from "./forge.js";
import { askKai, kaiAnswer, kaiRequest } from "./kai.js";
import { runLine } from "./runs.js";
import { orMcpError, type ToolEnv } from "./tool.js";

const LaneArg = z
  .string()
  .regex(/^[^/\s]+\/[^/\s]+$/, "expected LAYER/NAME, e.g. layer_b/doc_update")
  .optional()
  .describe("the lane as LAYER/NAME (default: the project's first lane)");

function user(text: string, env: ToolEnv): GetPromptResult {
  return { messages: [{ role: "user", content: { type: "text", text: env.ctx.redactor.redact(text) } }] };
}

const section = (title: string, lines: string[], none: string) => [
  `## ${title}`,
  ...(lines.length > 0 ? lines.map((l) => `- ${l}`) : [`- ${none}`]),
  "",
];

/** Runs waiting for input that `actor` may resume (the API's rule: a human, the role, or the entry's from/to). */
async function resumable(env: ToolEnv, runs: RunRecord[]): Promise<RunRecord[]> {
  const out: RunRecord[] = [];
  for (const r of runs) {
    try {
      await assertMayActOnRun(env.ctx, env.actor, r, "resume");
      out.push(r);
    } catch {
      // Someone else's run: not waiting for this actor.
    }
  }
  return out;
}

/** The common asks as prompts, each carrying the facts now so the model starts from them. */
export function registerPrompts(server: McpServer, env: ToolEnv): void {
  server.registerPrompt(
    "what_waits_for_me",
    {
      title: "What waits for me",
      description:
        "What waits for you (the authenticated actor): open entries addressed to you, runs waiting for input you may give, and (for a human) environment proposals to decide",
    },
    async () =>
      orMcpError(env, async () => {
        const actor = env.actor;
        // The oldest page of each (what has waited longest comes first); at most MAX_PAGE_LIMIT of each.
        const entries = (
          (await env.route("GET /v1/entries", {
            query: { to: actor, status: "open,in_progress", limit: MAX_PAGE_LIMIT },
          })) as Page<StoredEntry>
        ).items;
        const runs = await resumable(
          env,
          ((await env.route("GET /v1/runs", { query: { state: "waiting", limit: MAX_PAGE_LIMIT } })) as Page<RunRecord>)
            .items,
        );
        const human = env.ctx.project.config.humans.includes(actor);
        const proposals = human
          ? (
              (await env.route("GET /v1/env/proposals", {
                query: { status: "pending", limit: MAX_PAGE_LIMIT },
              })) as Page<EnvironmentProposal>
            ).items
          : [];
        const text = [
          `I am ${actor} on project ${env.ctx.project.config.project_id}. This is what waits for me now:`,
          "",
          ...section("Entries addressed to me (open or in progress)", [...entries].reverse().map(entryLine), "none"),
          ...section("Runs waiting for input I may give", [...runs].reverse().map(runLine), "none"),
          ...(human ? section("Environment proposals waiting for a human", proposals.map(proposalLine), "none") : []),
          "Tell me what to do first and why, most urgent first. For each item say which tool does it: bb_show and bb_change_status for entries, runs_show, runs_events and runs_resume (inputs as in expected_inputs) or runs_cancel for runs" +
            (human ? ", env_proposal_accept or env_proposal_reject for proposals." : "."),
        ];
        return user(text.join("\n"), env);
      }),
  );

  server.registerPrompt(
    "what_changed_this_week",
    {
      title: "What changed this week",
      description:
        "What changed in the project in the last 7 days, from Kai (merged PRs, STATE/docs changes, runs, highlights, risks)",
      argsSchema: { lane: LaneArg },
    },
    async (args) => {
      const r = kaiAnswer(
        await orMcpError(env, () =>
          askKai(env, kaiRequest(env.ctx, "what_changed", { lane: args.lane, time_window_days: 7 })),
        ),
        "digest",
      );
      const text = [
        "Here is Kai's account of what changed in the last 7 days:",
        "",
        r.text,
        "",
        'Explain it to me in a few sentences: what moved forward, what is at risk, and what I should look at. Cite PR numbers and entry ids. For evidence, call kai_what_changed with detail "full", or bb_show / runs_show / prs_list.',
      ];
      return user(text.join("\n"), env);
    },
  );

  server.registerPrompt(
    "lane_status",
    {
      title: "Where a lane stands",
      description: "Where a lane's current cycle stands, from Kai (steps, latest entries and runs, next actions)",
      argsSchema: { lane: LaneArg },
    },
    async (args) => {
      const r = kaiAnswer(
        await orMcpError(env, () => askKai(env, kaiRequest(env.ctx, "lane_status", { lane: args.lane }))),
        "digest",
      );
      const text = [
        "Here is Kai's status of the lane:",
        "",
        r.text,
        "",
        "Tell me where the cycle stands, what blocks it and the next step, and who owns it. Use runs_show and bb_show for detail.",
      ];
      return user(text.join("\n"), env);
    },
  );
}
