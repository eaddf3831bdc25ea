import { ResourceTemplate, type ListResourcesCallback, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import type { StoredEntry } from "../../blackboard/index.js";
import type { RunRecord } from "../../lattice/index.js";
import { MAX_PAGE_LIMIT, type Page } from "../../store/index.js";
import { askKai, kaiRequest } from "./kai.js";
import { orMcpError, type ToolEnv } from "./tool.js";

/** How many entries or runs a resource listing offers (newest first); the tools page through all. */
const LISTED = 50;

/** How many ids a completion offers, from how many of the most recent. */
const COMPLETIONS = 20;
const COMPLETION_SCAN = MAX_PAGE_LIMIT;

/** How many events `pmagent://runs/{id}/events` holds; runs_events pages through longer runs. */
const EVENTS_CAP = MAX_PAGE_LIMIT;

/** A template variable as the id it stands for: ids are percent-encoded in URIs (`a b` → `a%20b`). */
function one(v: string | string[] | undefined): string {
  const raw = Array.isArray(v) ? (v[0] ?? "") : (v ?? "");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** A resource read: JSON (redacted), with pmagent's typed errors as MCP errors `code: message`. */
async function read(env: ToolEnv, uri: URL, load: () => Promise<unknown>): Promise<ReadResourceResult> {
  const value = await orMcpError(env, load);
  return {
    contents: [{ uri: uri.href, mimeType: "application/json", text: env.ctx.redactor.redact(JSON.stringify(value)) }],
  };
}

/** A Kai answer as a resource: its Markdown digest first, then the whole kai_response_v1. */
async function kai(
  env: ToolEnv,
  uri: URL,
  type: "lane_status" | "what_changed",
  lane?: string,
): Promise<ReadResourceResult> {
  const r = await orMcpError(env, () => askKai(env, kaiRequest(env.ctx, type, lane === undefined ? {} : { lane })));
  return {
    contents: [
      { uri: uri.href, mimeType: "text/markdown", text: env.ctx.redactor.redact(r.summary_md) },
      { uri: uri.href, mimeType: "application/json", text: env.ctx.redactor.redact(JSON.stringify(r)) },
    ],
  };
}

/**
 * Entries, runs, their events and logs, and Kai's answers as resources, read through the same API
 * routes as the tools (so the same rules and redaction apply).
 */
export function registerResources(server: McpServer, env: ToolEnv): void {
  const recentEntries = async () => {
    const recent = (await env.route("GET /v1/entries", {
      query: { order: "newest", limit: LISTED },
    })) as Page<StoredEntry>;
    return {
      resources: recent.items.map((s) => ({
        uri: `pmagent://entries/${encodeURIComponent(s.entry.id)}`,
        name: `entry ${s.entry.id}`,
        description: `[${s.entry.status}] ${s.entry.kind} ${s.entry.from} → ${s.entry.to}`,
        mimeType: "application/json",
      })),
    };
  };
  const recentRuns = async () => {
    const recent = (await env.route("GET /v1/runs", { query: { order: "newest", limit: LISTED } })) as Page<RunRecord>;
    return {
      resources: recent.items.map((r) => ({
        uri: `pmagent://runs/${encodeURIComponent(r.id)}`,
        name: `run ${r.id}`,
        description: `[${r.state}] ${r.role}${r.entry_id ? ` on ${r.entry_id}` : ""}`,
        mimeType: "application/json",
      })),
    };
  };

  // Completion of ids a client offers while the user types a URI: the newest that start with it.
  // Completions offer the newest matching ids among the most recent COMPLETION_SCAN.
  const completeEntry = async (prefix: string) =>
    (
      (await env.route("GET /v1/entries", { query: { order: "newest", limit: COMPLETION_SCAN } })) as Page<StoredEntry>
    ).items
      .map((s) => s.entry.id)
      .filter((id) => id.startsWith(prefix))
      .slice(0, COMPLETIONS);
  const completeRun = async (prefix: string) =>
    ((await env.route("GET /v1/runs", { query: { order: "newest", limit: COMPLETION_SCAN } })) as Page<RunRecord>).items
      .map((r) => r.id)
      .filter((id) => id.startsWith(prefix))
      .slice(0, COMPLETIONS);
  const entryTemplate = (uri: string, list: ListResourcesCallback | undefined) =>
    new ResourceTemplate(uri, { list, complete: { id: completeEntry } });
  const runTemplate = (uri: string, list: ListResourcesCallback | undefined) =>
    new ResourceTemplate(uri, { list, complete: { id: completeRun } });

  server.registerResource(
    "entry",
    entryTemplate("pmagent://entries/{id}", recentEntries),
    {
      title: "Blackboard entry",
      description: "One blackboard entry with its version and claim (the 50 most recent are listed)",
      mimeType: "application/json",
    },
    (uri, v) => read(env, uri, () => env.route("GET /v1/entries/:id", { params: { id: one(v.id) } })),
  );
  server.registerResource(
    "entry_history",
    entryTemplate("pmagent://entries/{id}/history", undefined),
    {
      title: "Entry history",
      description: `An entry's change history, oldest first (the first ${MAX_PAGE_LIMIT}; the bb_history tool pages through more)`,
      mimeType: "application/json",
    },
    (uri, v) =>
      read(env, uri, () =>
        (
          env.route("GET /v1/entries/:id/history", {
            params: { id: one(v.id) },
            query: { limit: MAX_PAGE_LIMIT },
          }) as Promise<Page<unknown>>
        ).then((p) => p.items),
      ),
  );
  server.registerResource(
    "run",
    runTemplate("pmagent://runs/{id}", recentRuns),
    {
      title: "Run",
      description: "One run with its protocol errors and hard-rule violations (the 50 most recent are listed)",
      mimeType: "application/json",
    },
    (uri, v) => read(env, uri, () => env.route("GET /v1/runs/:id", { params: { id: one(v.id) } })),
  );
  server.registerResource(
    "run_events",
    runTemplate("pmagent://runs/{id}/events", undefined),
    {
      title: "Run events",
      description: `A run's events in stored order (the first ${EVENTS_CAP}; the runs_events tool pages through more)`,
      mimeType: "application/json",
    },
    (uri, v) =>
      read(env, uri, () =>
        (
          env.route("GET /v1/runs/:id/events", { params: { id: one(v.id) }, query: { limit: EVENTS_CAP } }) as Promise<
            Page<unknown>
          >
        ).then((p) => p.items),
      ),
  );
  server.registerResource(
    "run_logs",
    runTemplate("pmagent://runs/{id}/logs", undefined),
    {
      title: "Run log",
      description: "A run's non-event output (capped, secrets redacted)",
      mimeType: "application/json",
    },
    (uri, v) => read(env, uri, () => env.route("GET /v1/runs/:id/logs", { params: { id: one(v.id) } })),
  );
  server.registerResource(
    "kai_lane_status",
    "pmagent://kai/lane_status",
    {
      title: "Kai: lane status",
      description: "Where the first lane's cycle stands: Kai's Markdown digest, then the whole kai_response_v1",
      mimeType: "text/markdown",
    },
    (uri) => kai(env, uri, "lane_status"),
  );
  server.registerResource(
    "kai_lane_status_of",
    new ResourceTemplate("pmagent://kai/lane_status/{layer}/{name}", {
      list: async () => ({
        resources: env.ctx.project.config.lanes.map((l) => ({
          uri: `pmagent://kai/lane_status/${l.layer}/${l.name}`,
          name: `lane ${l.layer}/${l.name}`,
          mimeType: "text/markdown",
        })),
      }),
    }),
    {
      title: "Kai: status of a lane",
      description: "Where this lane's cycle stands: Kai's Markdown digest, then the whole kai_response_v1",
      mimeType: "text/markdown",
    },
    (uri, v) => kai(env, uri, "lane_status", `${one(v.layer)}/${one(v.name)}`),
  );
  server.registerResource(
    "kai_what_changed",
    "pmagent://kai/what_changed",
    {
      title: "Kai: what changed this week",
      description: "What changed in the last 7 days: Kai's Markdown digest, then the whole kai_response_v1",
      mimeType: "text/markdown",
    },
    (uri) => kai(env, uri, "what_changed"),
  );
}
