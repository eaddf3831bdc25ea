import type { Page } from "../../store/index.js";
import { z } from "zod";
import {
  ACTION_STATES,
  RUN_STATES,
  usageText,
  type ActionRecord,
  type RunLogLine,
  type RunRecord,
  type StoredEvent,
  type UsageSummary,
} from "../../lattice/index.js";
import { Cursor, Detail, Id, Limit, PageFields, READ, clip, pageLine, tool, type ToolDef } from "./tool.js";

export const RunDigestSchema = z.object({
  id: z.string(),
  role: z.string(),
  entry_id: z.string().nullable(),
  state: z.enum(RUN_STATES),
  attempt: z.number().int(),
  event_count: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  reason: z.string().nullable().describe("why the run failed or was canceled"),
  waiting: z
    .object({
      reason: z.string(),
      checkpoint_id: z.string(),
      expected_inputs: z.record(z.string(), z.string()),
      held: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          "what the resume's context will carry: the result of the blocking action the sprite asked for (an opened pull request)",
        ),
    })
    .nullable()
    .describe("what a waiting run needs: runs_resume takes inputs matching expected_inputs (name → type)"),
});

export function runDigest(r: RunRecord): z.output<typeof RunDigestSchema> {
  // A finished run keeps the record of its last wait; only a run waiting now waits for anything.
  const waiting =
    r.waiting && r.state === "waiting"
      ? {
          reason: r.waiting.reason,
          checkpoint_id: r.waiting.checkpoint_id,
          expected_inputs: r.waiting.expected_inputs,
          ...(r.waiting.context ? { held: r.waiting.context } : {}),
        }
      : null;
  return {
    id: r.id,
    role: r.role,
    entry_id: r.entry_id,
    state: r.state,
    attempt: r.attempt,
    event_count: r.event_count,
    created_at: r.created_at,
    updated_at: r.updated_at,
    finished_at: r.finished_at,
    exit_code: r.exit_code,
    reason: r.reason,
    waiting,
  };
}

export function runLine(r: RunRecord): string {
  const waits =
    r.waiting && r.state === "waiting"
      ? `; waits (${r.waiting.reason}) for ${Object.entries(r.waiting.expected_inputs)
          .map(([k, t]) => `${k}: ${t}`)
          .join(", ")}`
      : "";
  const why = r.reason ? `; ${clip(r.reason, 80)}` : "";
  return `${r.id} [${r.state}] ${r.role}${r.entry_id ? ` on ${r.entry_id}` : ""} (attempt ${r.attempt}, ${r.event_count} events, created ${r.created_at}${r.finished_at ? `, finished ${r.finished_at}` : ""})${waits}${why}`;
}

const RunId = Id("run", "run_20261125T022531_98c24f5d");

const UsageSchema = z
  .object({
    total_tokens: z.number().int(),
    input_tokens: z.number().int().describe("cached input included"),
    cached_input_tokens: z.number().int(),
    output_tokens: z.number().int().describe("reasoning included"),
    reasoning_tokens: z.number().int(),
    cost: z
      .number()
      .nullable()
      .describe("by the config's prices; null when there are none, or a model has no price (see unpriced)"),
    unpriced: z.array(z.string()).describe("models the config's prices do not cover"),
  })
  .describe("the tokens the run's agents reported, and their cost");

const EventSchema = z.object({
  seq: z.number().int().describe("pass the last seq you saw as `after` to read on"),
  event_type: z.string(),
  received_at: z.string(),
  brief: z.string().describe("the event's payload as compact JSON, cut to 160 characters"),
  event: z.record(z.string(), z.unknown()).optional().describe('the whole event (only with detail: "full")'),
});

const LogLineSchema = z.object({
  seq: z.number().int(),
  stream: z.enum(["stdout", "stderr", "supervisor"]),
  text: z.string(),
  at: z.string(),
});

const ActionSchema = z.object({
  run_id: z.string(),
  action: z.string().describe("e.g. OPEN_PR, POST_COMMENT, FETCH_CREDENTIAL"),
  state: z.enum(ACTION_STATES),
  blocking: z.boolean().describe("the sprite waits for the outcome"),
  attempts: z.number().int(),
  outcome: z.string().describe("the result or error, as compact JSON cut to 160 characters"),
  updated_at: z.string(),
  full: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('the whole record: parameters (redacted), result, error (only with detail: "full")'),
});

function actionOutcome(a: ActionRecord): string {
  if (a.error) return clip(`${a.error.code}: ${a.error.message}`);
  return a.result ? clip(JSON.stringify(a.result)) : a.state;
}

const NextAfter = z
  .number()
  .int()
  .nullable()
  .describe("pass as `after` to read the next page; null when there is no more yet");
const After = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe("only items after this seq (the next_after of the previous call); omit to start at the beginning");

function more<T extends { seq: number }>(rows: T[], limit: number): { items: T[]; next_after: number | null } {
  const items = rows.slice(0, limit);
  return { items, next_after: rows.length > limit ? items[items.length - 1]!.seq : null };
}

export const RUN_TOOLS: ToolDef[] = [
  tool({
    name: "runs_list",
    title: "List runs",
    description:
      "Runs of sprites, newest first, as one-line digests (state, role, entry, attempt, what a waiting run needs). Filter by state, role or entry; page with limit and cursor.",
    input: z
      .object({
        state: z
          .enum(RUN_STATES)
          .optional()
          .describe(`only runs in this state: ${RUN_STATES.join(", ")} (waiting = needs runs_resume)`),
        role: z.string().min(1).optional().describe("only runs of this role, e.g. Builder"),
        entry: z.string().min(1).optional().describe("only runs of this blackboard entry"),
        limit: Limit(20, 100, "runs"),
        cursor: Cursor,
      })
      .strict(),
    output: z.object({ runs: z.array(RunDigestSchema), ...PageFields }),
    hints: READ,
    async run(a, env) {
      const p = (await env.route("GET /v1/runs", {
        query: { state: a.state, role: a.role, entry: a.entry, order: "newest", limit: a.limit, cursor: a.cursor },
      })) as Page<RunRecord>;
      return {
        structured: { runs: p.items.map(runDigest), next_cursor: p.next },
        text: [...p.items.map(runLine), pageLine(p.items.length, p.next, "runs")].join("\n"),
      };
    },
  }),
  tool({
    name: "runs_show",
    title: "Show a run",
    description:
      'One run: state, attempt, what it waits for, why it failed, its token usage and cost, and counts of protocol errors and hard-rule violations. detail "full" adds the whole record (command, workspace, gate decision, usage per model, the errors and violations).',
    input: z.object({ id: RunId, detail: Detail }).strict(),
    output: z.object({
      run: RunDigestSchema,
      usage: UsageSchema,
      protocol_errors: z.number().int(),
      violations: z.number().int(),
      full: z.record(z.string(), z.unknown()).optional().describe('the API\'s whole answer (only with detail: "full")'),
    }),
    hints: READ,
    async run(a, env) {
      const r = (await env.route("GET /v1/runs/:id", { params: { id: a.id } })) as RunRecord & {
        usage: UsageSummary;
        protocol_errors: unknown[];
        violations: unknown[];
      };
      const counts = `${r.protocol_errors.length} protocol errors, ${r.violations.length} violations; usage: ${usageText(r.usage)}`;
      const full = a.detail === "full" ? (r as unknown as Record<string, unknown>) : undefined;
      const { models: _models, ...usage } = r.usage;
      return {
        structured: {
          run: runDigest(r),
          usage,
          protocol_errors: r.protocol_errors.length,
          violations: r.violations.length,
          full,
        },
        text: full ? `${runLine(r)}; ${counts}\n${JSON.stringify(full)}` : `${runLine(r)}; ${counts}`,
      };
    },
  }),
  tool({
    name: "runs_events",
    title: "A run's events",
    description:
      'A run\'s protocol events in the order they were stored (seq), each as type, time and a brief of its payload. Page with limit and cursor (the previous next_cursor); filter by type; detail "full" adds each whole event.',
    input: z
      .object({
        id: RunId,
        type: z
          .string()
          .min(1)
          .optional()
          .describe("only events of this type, e.g. WAITING, ACTION_REQUEST, COMPLETED"),
        limit: Limit(50, 500, "events"),
        cursor: Cursor,
        detail: Detail,
      })
      .strict(),
    output: z.object({ events: z.array(EventSchema), ...PageFields }),
    hints: READ,
    async run(a, env) {
      const { items, next } = (await env.route("GET /v1/runs/:id/events", {
        params: { id: a.id },
        query: { type: a.type, limit: a.limit, cursor: a.cursor },
      })) as Page<StoredEvent>;
      const events = items.map((e) => ({
        seq: e.seq,
        event_type: e.event_type,
        received_at: e.received_at,
        brief: clip(JSON.stringify(e.event.payload ?? {})),
        event: a.detail === "full" ? e.event : undefined,
      }));
      const lines = events.map((e) => `#${e.seq} ${e.received_at} ${e.event_type} ${e.brief}`);
      return {
        structured: { events, next_cursor: next },
        text: [
          ...lines,
          ...(a.detail === "full" ? [JSON.stringify(items.map((e) => e.event))] : []),
          pageLine(events.length, next, "events"),
        ].join("\n"),
      };
    },
  }),
  tool({
    name: "runs_logs",
    title: "A run's log",
    description:
      "A run's non-event output (stdout, stderr and the supervisor's notes; capped, secrets redacted), in order. Page with after (the previous next_after) and limit; filter by stream.",
    input: z
      .object({
        id: RunId,
        stream: z.enum(["stdout", "stderr", "supervisor"]).optional().describe("only this stream"),
        after: After,
        limit: Limit(100, 1000, "lines"),
      })
      .strict(),
    output: z.object({ lines: z.array(LogLineSchema), next_after: NextAfter }),
    hints: READ,
    async run(a, env) {
      // The API route has no paging; the run store's own reader pages (and says run_not_found alike).
      const rows: RunLogLine[] = await env.ctx.supervisor.runs.logs(a.id, {
        stream: a.stream,
        afterSeq: a.after,
        limit: a.limit + 1,
      });
      const { items, next_after } = more(rows, a.limit);
      const tail =
        next_after === null ? `${items.length} lines` : `${items.length} lines shown; more with after ${next_after}`;
      return {
        structured: { lines: items, next_after },
        text: [...items.map((l) => `#${l.seq} ${l.stream}: ${l.text}`), tail].join("\n"),
      };
    },
  }),
  tool({
    name: "runs_actions",
    title: "Actions of runs",
    description:
      'What sprites asked the supervisor to do (ACTION_REQUEST: open a PR, post a comment, fetch a credential) and the outcome of each, newest first. Filter by run or state; page with limit and cursor; detail "full" adds parameters (redacted) and results.',
    input: z
      .object({
        run: z.string().min(1).optional().describe("only actions of this run"),
        state: z
          .enum(ACTION_STATES)
          .optional()
          .describe(`only actions in this state: ${ACTION_STATES.join(", ")}`),
        limit: Limit(20, 100, "actions"),
        cursor: Cursor,
        detail: Detail,
      })
      .strict(),
    output: z.object({ actions: z.array(ActionSchema), ...PageFields }),
    hints: READ,
    async run(a, env) {
      const p = (await env.route("GET /v1/actions", {
        query: { run: a.run, state: a.state, order: "newest", limit: a.limit, cursor: a.cursor },
      })) as Page<ActionRecord>;
      const actions = p.items.map((x) => ({
        run_id: x.run_id,
        action: x.action,
        state: x.state,
        blocking: x.blocking,
        attempts: x.attempts,
        outcome: actionOutcome(x),
        updated_at: x.updated_at,
        full: a.detail === "full" ? (x as unknown as Record<string, unknown>) : undefined,
      }));
      const lines = actions.map(
        (x) =>
          `${x.run_id} ${x.action} [${x.state}] after ${x.attempts} attempt${x.attempts === 1 ? "" : "s"}: ${x.outcome}`,
      );
      return {
        structured: { actions, next_cursor: p.next },
        text: [...lines, pageLine(p.items.length, p.next, "actions")].join("\n"),
      };
    },
  }),
  tool({
    name: "runs_cancel",
    title: "Cancel a run",
    description:
      "Cancel a run that has not finished: its sprite is stopped and its entry canceled. Allowed to a human, the run's role, or the author/addressee of its entry.",
    input: z
      .object({
        id: RunId,
        reason: z.string().min(1).max(500).optional().describe("why, kept on the run (default: canceled by you)"),
      })
      .strict(),
    output: z.object({ run: RunDigestSchema }),
    hints: { readOnly: false, destructive: true, idempotent: false },
    async run(a, env) {
      const r = (await env.route("POST /v1/runs/:id/cancel", {
        params: { id: a.id },
        body: a.reason === undefined ? {} : { reason: a.reason },
      })) as RunRecord;
      return { structured: { run: runDigest(r) }, text: runLine(r) };
    },
  }),
  tool({
    name: "runs_resume",
    title: "Resume a waiting run",
    description:
      "Resume a run in state waiting with inputs matching its expected_inputs (see runs_show: name → type, e.g. approved: boolean), and optionally a follow-up message to its agent (resumed into the same agent session). The run goes on under this server; follow it with runs_show or runs_events. The same resume twice changes nothing (noop: true).",
    input: z
      .object({
        id: RunId,
        inputs: z
          .record(z.string(), z.unknown())
          .describe('the inputs the run waits for, e.g. {"approved": true, "comments": []}; {} when it waits for none'),
        context: z.record(z.string(), z.unknown()).optional().describe("extra context handed to the sprite"),
        message: z
          .string()
          .optional()
          .describe(
            "a follow-up message to the agent, e.g. \"use the blue theme, and keep the README short\"; it reaches the agent's resumed session (in the resume's context.message)",
          ),
        queue: z
          .boolean()
          .optional()
          .describe(
            "true: leave the resume to any worker of the run's role, on any machine (pmagent worker), instead of running it under this server",
          ),
      })
      .strict(),
    output: z.object({
      noop: z.boolean().describe("true when this exact resume was already done"),
      queued: z.boolean().optional().describe("true when left to a worker"),
      run: RunDigestSchema,
    }),
    hints: { readOnly: false, destructive: false, idempotent: true },
    async run({ id, ...body }, env) {
      const r = (await env.route("POST /v1/runs/:id/resume", { params: { id }, body })) as {
        noop: boolean;
        queued?: boolean;
        run: RunRecord;
      };
      if (r.queued)
        return {
          structured: { noop: r.noop, queued: true, run: runDigest(r.run) },
          text: `${r.noop ? "queued already: " : "queued for a worker of its role: "}${runLine(r.run)}`,
        };
      return {
        structured: { noop: r.noop, run: runDigest(r.run) },
        text: `${r.noop ? "already resumed: " : "resumed: "}${runLine(r.run)}`,
      };
    },
  }),
  tool({
    name: "runs_retry",
    title: "Run a finished run's entry again",
    description:
      "Run a finished run's entry again here (humans only): the same command, or another agent a role of the config runs. A finished entry is re-opened as a new one for it.",
    input: z
      .object({ id: RunId, agent: z.string().min(1).optional().describe("e.g. codex (default: the run's command)") })
      .strict(),
    // The new run by its id and state (runs_show has the rest): the tool listing stays short.
    output: z.object({
      run_id: z.string(),
      state: z.string(),
      entry_id: z.string(),
      reopened_from: z.string().nullable(),
    }),
    hints: { readOnly: false, destructive: false, idempotent: false },
    async run({ id, agent }, env) {
      const r = (await env.route("POST /v1/runs/:id/retry", {
        params: { id },
        body: agent === undefined ? {} : { agent },
      })) as { run: RunRecord; entry_id: string; reopened_from: string | null };
      return {
        structured: { run_id: r.run.id, state: r.run.state, entry_id: r.entry_id, reopened_from: r.reopened_from },
        text: `started again${r.reopened_from ? ` (entry ${r.reopened_from} re-opened as ${r.entry_id})` : ""}: ${runLine(r.run)}`,
      };
    },
  }),
];
