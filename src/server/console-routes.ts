import { z } from "zod";
import { isTerminal } from "../blackboard/index.js";
import { localPullRequestDiff, standingGateDenials } from "../lattice/index.js";
import type { ServerContext } from "./context.js";
import { route, type Route } from "./route.js";

const limit = z.coerce.number().int("limit must be a whole number").min(1, "limit must be at least 1").max(200, "limit must be at most 200");

export const InboxQuery = z.object({ limit: limit.optional() }).strict();

export const PrParams = z.object({ number: z.coerce.number({ error: "expected a pull request number" }).int("expected a pull request number (a whole number)").min(1, "expected a pull request number (1 or more)") }).strict();

const newestFirst = <T>(list: T[], at: (x: T) => string): T[] => [...list].sort((a, b) => (at(a) < at(b) ? 1 : at(a) > at(b) ? -1 : 0));

/**
 * What waits for a person, in one answer: runs waiting for input (with their expected_inputs, for
 * the resume form), pending environment proposals, unfinished entries addressed to a human, and
 * entries the OA run gate denied that are still open. Each list newest first, at most `limit`.
 */
async function inbox(ctx: ServerContext, max: number) {
  const humans = ctx.project.config.humans;
  const [waiting, proposals, unfinished, denials] = await Promise.all([
    ctx.supervisor.runs.list({ state: "waiting" }),
    ctx.proposals.list({ status: "pending" }),
    ctx.board.list({ status: ["open", "in_progress"] }),
    standingGateDenials(ctx.store, ctx.project.config.project_id, max),
  ]);
  const denied = [];
  for (const d of denials) {
    const entry = await ctx.board.get(d.entry_id).catch(() => null);
    if (entry && !isTerminal(entry.entry.status)) denied.push({ ...d, entry });
  }
  return {
    waiting_runs: newestFirst(waiting.filter((r) => r.waiting !== null), (r) => r.updated_at).slice(0, max),
    proposals: proposals.slice(0, max),
    entries: newestFirst(unfinished.filter((s) => humans.includes(s.entry.to)), (s) => s.entry.updated_at).slice(0, max),
    denials: denied,
  };
}

/** Routes the web console reads beyond the lists: the inbox and a local pull request's diff. */
export function consoleRoutes(ctx: ServerContext): Route[] {
  return [
    route({
      method: "GET", url: "/v1/inbox", tag: "inbox", summary: "what waits for a person: runs waiting for input, pending environment proposals, entries addressed to a human, standing OA gate denials (each newest first, at most limit, default 50)",
      query: InboxQuery,
      handler: async ({ query }) => inbox(ctx, query.limit ?? 50),
    }),
    route({
      method: "GET", url: "/v1/prs/:number/diff", tag: "forge", summary: "one pull request of the local forge with its diff against its base (git diff base...head; cut at 512 KiB, truncated says so)",
      params: PrParams, errors: [404],
      handler: async ({ params }) => localPullRequestDiff(ctx.forge, params.number),
    }),
  ];
}
