import { z } from "zod";
import { byCreation, isTerminal } from "../blackboard/index.js";
import { standingGateDenials } from "../lattice/index.js";
import { localPullRequestDiff } from "../forge/index.js";
import { describeProposals, type ServerContext } from "./context.js";
import { route, type Route } from "./route.js";
import { PageQuery } from "./schemas.js";

export const InboxQuery = z.object({ limit: PageQuery.limit }).strict();

export const PrParams = z
  .object({
    number: z.coerce
      .number({ error: "expected a pull request number" })
      .int("expected a pull request number (a whole number)")
      .min(1, "expected a pull request number (1 or more)"),
  })
  .strict();

/**
 * What waits for a person, in one answer: runs waiting for input (with their expected_inputs, for
 * the resume form), pending environment proposals, unfinished entries addressed to a human, and
 * entries the OA run gate denied that are still open. Each list newest first, at most `limit`:
 * each is the first page of its indexed list, so the inbox costs the same on a board of any size.
 * Entries: each human's newest page, merged, which holds the newest `limit` of them all.
 */
async function inbox(ctx: ServerContext, max: number) {
  const newest = { order: "newest", limit: max } as const;
  const [waiting, proposals, addressed, denials] = await Promise.all([
    ctx.supervisor.runs.page({ state: "waiting" }, newest),
    ctx.proposals.page({ status: "pending" }, newest),
    Promise.all(ctx.project.config.humans.map((to) => ctx.board.page({ status: ["open", "in_progress"], to }, newest))),
    standingGateDenials(ctx.store, ctx.project.config.project_id, max),
  ]);
  const denied = [];
  for (const d of denials) {
    const entry = await ctx.board.get(d.entry_id).catch(() => null);
    if (entry && !isTerminal(entry.entry.status)) denied.push({ ...d, entry });
  }
  return {
    waiting_runs: waiting.items.filter((r) => r.waiting !== null),
    proposals: await describeProposals(ctx, proposals.items),
    entries: addressed
      .flatMap((p) => p.items)
      .sort((a, b) => byCreation(b, a))
      .slice(0, max),
    denials: denied,
  };
}

/** Routes the web console reads beyond the lists: the inbox and a local pull request's diff. */
export function consoleRoutes(ctx: ServerContext): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/inbox",
      tag: "inbox",
      summary:
        "what waits for a person: runs waiting for input, pending environment proposals, entries addressed to a human, standing OA gate denials (each newest first, at most limit: default 50, at most 500)",
      query: InboxQuery,
      handler: async ({ query }) => inbox(ctx, query.limit ?? 50),
    }),
    route({
      method: "GET",
      url: "/v1/prs/:number/diff",
      tag: "forge",
      summary:
        "one pull request of the local forge with its diff against its base (git diff base...head; cut at 512 KiB, truncated says so)",
      params: PrParams,
      errors: [404],
      handler: async ({ params }) => localPullRequestDiff(ctx.forge, params.number),
    }),
  ];
}
