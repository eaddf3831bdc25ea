import type { Page } from "../../store/index.js";
import { z } from "zod";
import {
  EntryInputSchema,
  StatusSchema,
  entrySummary,
  type HistoryRecord,
  type StoredEntry,
} from "../../blackboard/index.js";
import { StoredEntrySchema } from "../schemas.js";
import { Cursor, Detail, Id, Limit, PageFields, READ, clip, pageLine, tool, type ToolDef } from "./tool.js";

export const EntryDigestSchema = z.object({
  id: z.string(),
  from: z.string(),
  to: z.string(),
  kind: z.string(),
  status: StatusSchema,
  version: z.number().int(),
  claimed_by: z.string().nullable(),
  updated_at: z.string(),
  note: z.string().optional(),
  summary: z.string().optional().describe("payload.summary's first line: the entry's title"),
});

export function entryDigest(s: StoredEntry): z.output<typeof EntryDigestSchema> {
  const e = s.entry;
  const summary = entrySummary(e);
  return {
    id: e.id,
    from: e.from,
    to: e.to,
    kind: e.kind,
    status: e.status,
    version: s.version,
    claimed_by: s.claimed_by,
    updated_at: e.updated_at,
    ...(e.note !== undefined ? { note: e.note } : {}),
    ...(summary !== null ? { summary } : {}),
  };
}

export function entryLine(s: StoredEntry): string {
  const e = s.entry;
  const summary = entrySummary(e);
  return `${e.id} [${e.status}] ${summary !== null ? `"${summary}" (${e.kind})` : e.kind} ${e.from} → ${e.to} (v${s.version}, updated ${e.updated_at}${s.claimed_by ? `, claimed by ${s.claimed_by}` : ""})${e.note ? `: ${clip(e.note, 80)}` : ""}`;
}

const HistorySchema = z.object({
  seq: z.number().int(),
  entry_id: z.string(),
  version: z.number().int(),
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  from_status: StatusSchema.nullable(),
  to_status: StatusSchema,
  changed: z.array(z.string()).describe("the fields this change touched"),
  changes: z.record(z.string(), z.unknown()).optional().describe('field → {from, to} (only with detail: "full")'),
});

const shown = (s: StoredEntry) => `${entryLine(s)}\n${JSON.stringify(s.entry)}`;

const StatusArg = StatusSchema.describe(
  "the new status: open, in_progress, done, error or canceled (the lifecycle decides which moves are allowed)",
);

export const ENTRY_TOOLS: ToolDef[] = [
  tool({
    name: "bb_list",
    title: "List blackboard entries",
    description:
      "Blackboard entries, newest first, as one-line digests (id, status, kind, from → to, version). Filter by status, addressee, author or kind; page with limit and cursor. Use bb_show for an entry's payload.",
    input: z
      .object({
        status: z
          .array(StatusSchema)
          .min(1)
          .optional()
          .describe('only entries in these statuses, e.g. ["open", "in_progress"]'),
        to: z.string().min(1).optional().describe("only entries addressed to this actor (a role or a human)"),
        from: z.string().min(1).optional().describe("only entries posted by this actor"),
        kind: z.string().min(1).optional().describe("only entries of this kind, e.g. build_request"),
        limit: Limit(20, 100, "entries"),
        cursor: Cursor,
      })
      .strict(),
    output: z.object({ entries: z.array(EntryDigestSchema), ...PageFields }),
    hints: READ,
    async run(a, env) {
      const p = (await env.route("GET /v1/entries", {
        query: {
          status: a.status?.join(","),
          to: a.to,
          from: a.from,
          kind: a.kind,
          order: "newest",
          limit: a.limit,
          cursor: a.cursor,
        },
      })) as Page<StoredEntry>;
      return {
        structured: { entries: p.items.map(entryDigest), next_cursor: p.next },
        text: [...p.items.map(entryLine), pageLine(p.items.length, p.next, "entries")].join("\n"),
      };
    },
  }),
  tool({
    name: "bb_show",
    title: "Show a blackboard entry",
    description:
      "One blackboard entry in full (payload, target_docs, note) with its version and claim. The version is what bb_change_status takes as expected_version.",
    input: z.object({ id: Id("entry", "build-42") }).strict(),
    output: StoredEntrySchema,
    hints: READ,
    async run(a, env) {
      const s = (await env.route("GET /v1/entries/:id", { params: { id: a.id } })) as StoredEntry;
      return { structured: s, text: shown(s) };
    },
  }),
  tool({
    name: "bb_history",
    title: "An entry's history",
    description:
      'The change history of one entry, oldest first: who moved it from which status to which, and which fields changed. Paged with limit and cursor; detail "full" adds each change\'s before/after values.',
    input: z
      .object({ id: Id("entry", "build-42"), limit: Limit(20, 200, "changes"), cursor: Cursor, detail: Detail })
      .strict(),
    output: z.object({ history: z.array(HistorySchema), ...PageFields }),
    hints: READ,
    async run(a, env) {
      const p = (await env.route("GET /v1/entries/:id/history", {
        params: { id: a.id },
        query: { limit: a.limit, cursor: a.cursor },
      })) as Page<HistoryRecord>;
      const history = p.items.map((h) => ({
        ...h,
        changed: Object.keys(h.changes),
        changes: a.detail === "full" ? h.changes : undefined,
      }));
      const lines = history.map(
        (h) =>
          `#${h.seq} v${h.version} ${h.at} ${h.actor} ${h.action} ${h.from_status ?? "-"} → ${h.to_status} (${h.changed.join(", ")})`,
      );
      return {
        structured: { history, next_cursor: p.next },
        text: [...lines, pageLine(p.items.length, p.next, "changes")].join("\n"),
      };
    },
  }),
  tool({
    name: "bb_post",
    title: "Post a blackboard entry",
    description:
      "Post an entry as yourself (the authenticated actor): `to` and `kind` are required; id, payload, note and target_docs are optional; `from` defaults to you and only humans may post for someone else. Posting the same id with the same content again changes nothing.",
    input: z
      .object({
        entry: EntryInputSchema.describe(
          "the entry: {to, kind, id?, payload?, note?, target_docs?, source_issue?, source_run_id?}; from defaults to you",
        ),
      })
      .strict(),
    output: StoredEntrySchema,
    hints: { readOnly: false, destructive: false, idempotent: false },
    async run(a, env) {
      const s = (await env.route("POST /v1/entries", { body: a.entry })) as StoredEntry;
      return { structured: s, text: shown(s) };
    },
  }),
  tool({
    name: "bb_change_status",
    title: "Change an entry's status",
    description:
      "Move an entry to another status as yourself (lifecycle and permission rules apply: humans, the addressee or the author). Pass expected_version (from bb_show) to be refused if someone changed it meanwhile.",
    input: z
      .object({
        id: Id("entry", "build-42"),
        status: StatusArg,
        expected_version: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe("refuse (stale_write) unless the entry is still at this version"),
        note: z.string().max(2000).optional().describe("why, kept in the entry's history"),
      })
      .strict(),
    output: StoredEntrySchema,
    hints: { readOnly: false, destructive: true, idempotent: false },
    async run({ id, ...body }, env) {
      const s = (await env.route("POST /v1/entries/:id/status", { params: { id }, body })) as StoredEntry;
      return { structured: s, text: entryLine(s) };
    },
  }),
];
