import { z } from "zod";
import {
  kaiSchemas,
  MAX_HIGHLIGHTS,
  TIME_WINDOW_DAYS,
  type KaiResponse,
  type LaneStatus,
  type WhatChanged,
} from "../../kai/index.js";
import type { ServerContext } from "../context.js";
import { Detail, tool, type Hints, type ToolDef, type ToolEnv } from "./tool.js";

// The wire formats the Kai tools describe (zod, loaded with the server, not with Kai).
const { KaiRequestSchema, StepStatusSchema } = await kaiSchemas();

const LaneArg = z
  .string()
  .regex(/^[^/\s]+\/[^/\s]+$/, "expected LAYER/NAME, e.g. layer_b/doc_update")
  .optional()
  .describe("the lane as LAYER/NAME, e.g. layer_b/doc_update (default: the project's first lane)");

const Days = z
  .number()
  .int("time_window_days must be a whole number")
  .min(TIME_WINDOW_DAYS.min, `time_window_days must be at least ${TIME_WINDOW_DAYS.min}`)
  .max(TIME_WINDOW_DAYS.max, `time_window_days must be at most ${TIME_WINDOW_DAYS.max}`)
  .optional()
  .describe(
    `how many days back to look (${TIME_WINDOW_DAYS.min}–${TIME_WINDOW_DAYS.max}, default ${TIME_WINDOW_DAYS.default})`,
  );

/** The key fields of a lane_status_v1: the cycle, each step in a line, the top actions. */
const LaneKeySchema = z.object({
  cycle: z.object({
    latest_cycle_id: z.string().nullable(),
    status: z.string().nullable(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    found_in: z.string().nullable(),
  }),
  steps: z.array(
    z.object({
      role: z.string(),
      status: StepStatusSchema,
      entry_id: z.string().nullable(),
      run_id: z.string().nullable(),
      run_state: z.string().nullable(),
    }),
  ),
  next_actions: z
    .array(z.object({ title: z.string(), owner: z.string(), priority: z.string() }))
    .describe("the first three suggested actions"),
});

/** The key fields of a what_changed_v1: counts, top highlights and risks, open questions. */
const ChangesKeySchema = z.object({
  time_window: z.object({ from: z.string(), to: z.string() }),
  counts: z.object({
    prs_merged: z.number().int(),
    prs: z.number().int(),
    state_docs: z.number().int(),
    workflow_runs: z.number().int(),
    risks: z.number().int(),
  }),
  highlights: z.array(z.object({ rank: z.number().int(), category: z.string(), title: z.string() })),
  risks: z.array(z.object({ severity: z.string(), summary: z.string() })).describe("the first three risks"),
  open_questions: z.array(z.string()),
});

export const KaiAnswerSchema = z.object({
  request_id: z.string().nullable(),
  status: z.enum(["ok", "error"]),
  summary_md: z.string().describe("Kai's digest in Markdown: a heading and a few bullets"),
  notes: z.array(z.string()),
  lane_status: LaneKeySchema.optional(),
  what_changed: ChangesKeySchema.optional(),
  // Loosely typed here: the full schema would add 12k characters to every Kai tool in the listing.
  response: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'the whole kai_response_v1 (only with detail: "full"; its JSON Schema is schemas/kai_response_v1.schema.json)',
    ),
});
type KaiAnswer = z.output<typeof KaiAnswerSchema>;

function laneKey(d: LaneStatus): z.output<typeof LaneKeySchema> {
  const c = d.cycle;
  return {
    cycle: {
      latest_cycle_id: c.latest_cycle_id,
      status: c.status,
      started_at: c.started_at,
      completed_at: c.completed_at,
      found_in: c.found_in,
    },
    steps: Object.values(d.steps).map((s) => ({
      role: s.role,
      status: s.status,
      entry_id: s.latest_entry?.entry_id ?? null,
      run_id: s.run?.run_id ?? null,
      run_state: s.run?.state ?? null,
    })),
    next_actions: d.next_suggested_actions
      .slice(0, 3)
      .map((a) => ({ title: a.title, owner: a.owner, priority: a.priority })),
  };
}

function changesKey(d: WhatChanged): z.output<typeof ChangesKeySchema> {
  const prs = d.by_category.prs;
  return {
    time_window: d.time_window,
    counts: {
      prs_merged: prs.filter((p) => p.status === "merged").length,
      prs: prs.length,
      state_docs: d.by_category.state_docs.length,
      workflow_runs: d.by_category.workflows.reduce((n, w) => n + w.runs, 0),
      risks: d.risks.length,
    },
    highlights: d.highlights.map((h) => ({ rank: h.rank, category: h.category, title: h.title })),
    risks: d.risks.slice(0, 3).map((r) => ({ severity: r.severity, summary: r.summary })),
    open_questions: d.open_questions,
  };
}

/** Kai's response as the digest (Markdown plus key fields), the whole response only on request. */
export function kaiAnswer(r: KaiResponse, detail: "digest" | "full"): { structured: KaiAnswer; text: string } {
  const structured: KaiAnswer = {
    request_id: r.request_id,
    status: r.status,
    summary_md: r.summary_md,
    notes: r.notes,
  };
  if (r.status === "ok" && r.payload.kind === "lane_status_v1") structured.lane_status = laneKey(r.payload.data);
  if (r.status === "ok" && r.payload.kind === "what_changed_v1") structured.what_changed = changesKey(r.payload.data);
  if (detail === "full") structured.response = r;
  const key = structured.lane_status
    ? structured.lane_status.steps.map(
        (s) =>
          `- ${s.role}: ${s.status}${s.entry_id ? ` (entry ${s.entry_id}${s.run_id ? `, run ${s.run_id} ${s.run_state}` : ""})` : ""}`,
      )
    : (structured.what_changed?.open_questions.map((q) => `- Open question: ${q}`) ?? []);
  const notes = r.notes.length > 0 ? [`Notes: ${r.notes.join("; ")}`] : [];
  const full =
    detail === "full" ? [JSON.stringify(r)] : ['(detail: "full" gives the whole kai_response_v1 with evidence)'];
  return { structured, text: [r.summary_md, ...key, ...notes, ...full].join("\n") };
}

/** A kai_request_v1 for the given lane (default: the first) from this MCP caller. */
export function kaiRequest(
  ctx: ServerContext,
  type: "lane_status" | "what_changed",
  args: { lane?: string; time_window_days?: number; max_highlights?: number },
): Record<string, unknown> {
  const first = ctx.project.config.lanes[0]!;
  const [layer, name] = args.lane !== undefined ? args.lane.split("/") : [first.layer, first.name];
  const params: Record<string, unknown> = {};
  if (args.time_window_days !== undefined) params.time_window_days = args.time_window_days;
  if (args.max_highlights !== undefined) params.max_highlights = args.max_highlights;
  return {
    version: "kai_request_v1",
    request_id: `mcp-${new Date().toISOString()}`,
    from: { actor_type: "chatgpt", actor_id: "mcp" },
    project_id: ctx.project.config.project_id,
    type,
    lane: { layer, name },
    params,
  };
}

export async function askKai(env: ToolEnv, request: unknown): Promise<KaiResponse> {
  return (await env.route("POST /v1/kai", { body: request })) as KaiResponse;
}

// Kai reads the repository, the store and (when configured) GitHub: open world, nothing written.
const KAI: Hints = { readOnly: true, destructive: false, idempotent: true, openWorld: true };

export const KAI_TOOLS: ToolDef[] = [
  tool({
    name: "kai_lane_status",
    title: "Kai: where a lane stands",
    description:
      'Where the lane\'s current cycle stands: a Markdown digest, each step (role, status, entry, run) and the next suggested actions. detail "full" adds the whole lane_status_v1 with evidence.',
    input: z.object({ lane: LaneArg, time_window_days: Days, detail: Detail }).strict(),
    output: KaiAnswerSchema,
    hints: KAI,
    async run(a, env) {
      return kaiAnswer(await askKai(env, kaiRequest(env.ctx, "lane_status", a)), a.detail);
    },
  }),
  tool({
    name: "kai_what_changed",
    title: "Kai: what changed",
    description:
      'What changed in the last N days (default 7): a Markdown digest, counts (merged PRs, STATE/docs files, workflow runs), ranked highlights, risks and open questions. detail "full" adds the whole what_changed_v1 with evidence.',
    input: z
      .object({
        lane: LaneArg,
        time_window_days: Days,
        max_highlights: z
          .number()
          .int("max_highlights must be a whole number")
          .min(MAX_HIGHLIGHTS.min, `max_highlights must be at least ${MAX_HIGHLIGHTS.min}`)
          .max(MAX_HIGHLIGHTS.max, `max_highlights must be at most ${MAX_HIGHLIGHTS.max}`)
          .optional()
          .describe(
            `how many highlights at most (${MAX_HIGHLIGHTS.min}–${MAX_HIGHLIGHTS.max}, default ${MAX_HIGHLIGHTS.default})`,
          ),
        detail: Detail,
      })
      .strict(),
    output: KaiAnswerSchema,
    hints: KAI,
    async run(a, env) {
      return kaiAnswer(await askKai(env, kaiRequest(env.ctx, "what_changed", a)), a.detail);
    },
  }),
  tool({
    name: "kai_ask",
    title: "Kai: a full request",
    description:
      "Ask Kai with a whole kai_request_v1 (type lane_status or what_changed, with as_of and other params); answers like kai_lane_status / kai_what_changed. Prefer those two unless you need a field they do not take.",
    input: z
      .object({
        request: KaiRequestSchema.describe(
          "a kai_request_v1: {version, request_id, from, project_id, type, lane: {layer, name}, params}",
        ),
        detail: Detail,
      })
      .strict(),
    output: KaiAnswerSchema,
    hints: KAI,
    async run(a, env) {
      return kaiAnswer(await askKai(env, a.request), a.detail);
    },
  }),
];
