import { EntryInputSchema, type StoredEntry } from "../blackboard/index.js";
import { UsageError } from "../core/index.js";
import { summarizeUsage } from "../lattice/index.js";
import { decidePullRequest } from "../forge/index.js";
import { answer, kaiSchemas } from "../kai/index.js";
import {
  BootEnvelopeSchema,
  OAGuardOutputSchema,
  OAStateSchema,
  bootEnvelope,
  buildState,
  loadSurfaces,
  runOaGuard,
} from "../oa/index.js";
import { PrParams, consoleRoutes } from "./console-routes.js";
import { describeProposals, type ServerContext } from "./context.js";
import { assertMayActOnRun } from "./permissions.js";
import { startRunFor } from "./start-run.js";
import { route, type Route } from "./route.js";
import { workRoutes } from "./work-routes.js";
import {
  ActionListQuery,
  CancelBody,
  EmptyQuery,
  EntryListQuery,
  GuardQuery,
  HistoryQuery,
  IdParams,
  PrListQuery,
  PullCommentBody,
  ProposalListQuery,
  ResumeBody,
  RunEventsQuery,
  RunListQuery,
  RunLogsQuery,
  StatusChangeBody,
  StoredEntrySchema,
  pageOf,
  pageRequest,
} from "./schemas.js";
// The wire formats the Kai route validates and documents (zod, loaded with the server, not with Kai).
const { KaiRequestSchema, KaiResponseSchema } = await kaiSchemas();

/** Said of every list: how it pages. */
const PAGED =
  "paged by cursor (limit, default 50, at most 500; order=newest|oldest; cursor = the previous page's next)";

function entries(ctx: ServerContext): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/entries",
      tag: "entries",
      summary: `blackboard entries in creation order, oldest first by default (filters: status, to, from, kind); ${PAGED}`,
      query: EntryListQuery,
      response: pageOf(StoredEntrySchema),
      handler: async ({ query }) =>
        ctx.board.page({ status: query.status, to: query.to, from: query.from, kind: query.kind }, pageRequest(query)),
    }),
    route({
      method: "GET",
      url: "/v1/entries/:id",
      tag: "entries",
      summary: "one entry with its version",
      params: IdParams,
      query: EmptyQuery,
      response: StoredEntrySchema,
      errors: [404],
      handler: async ({ params }) => ctx.board.get(params.id),
    }),
    route({
      method: "POST",
      url: "/v1/entries",
      tag: "entries",
      summary: "post an entry as the caller (from defaults to the caller; only humans post for others)",
      body: EntryInputSchema,
      response: StoredEntrySchema,
      status: 201,
      errors: [403, 409],
      handler: async ({ actor, body }): Promise<StoredEntry> =>
        (await ctx.board.post(actor, body, "request body")).stored,
    }),
    route({
      method: "POST",
      url: "/v1/entries/:id/status",
      tag: "entries",
      summary:
        "change an entry's status as the caller (lifecycle and permission rules; expected_version for optimistic concurrency)",
      params: IdParams,
      body: StatusChangeBody,
      response: StoredEntrySchema,
      errors: [403, 404, 409],
      handler: async ({ actor, params, body }) =>
        ctx.board.transition(actor, params.id, body.status, {
          expectedVersion: body.expected_version,
          note: body.note,
        }),
    }),
    route({
      method: "GET",
      url: "/v1/entries/:id/history",
      tag: "entries",
      summary: `an entry's change history, oldest first by default; ${PAGED}`,
      params: IdParams,
      query: HistoryQuery,
      errors: [404],
      handler: async ({ params, query }) => ctx.board.historyPage(params.id, pageRequest(query)),
    }),
  ];
}

function runs(ctx: ServerContext): Route[] {
  const rs = ctx.supervisor.runs;
  return [
    route({
      method: "GET",
      url: "/v1/runs",
      tag: "runs",
      summary: `runs in creation order, oldest first by default (filters: state, role, entry); ${PAGED}`,
      query: RunListQuery,
      handler: async ({ query }) =>
        rs.page({ state: query.state, role: query.role, entryId: query.entry }, pageRequest(query)),
    }),
    route({
      method: "GET",
      url: "/v1/runs/:id",
      tag: "runs",
      summary: "one run with its token usage and cost, protocol errors and warnings and hard-rule violations",
      params: IdParams,
      query: EmptyQuery,
      errors: [404],
      handler: async ({ params }) => ({
        ...(await rs.get(params.id)),
        usage: summarizeUsage(await rs.usage(params.id), ctx.supervisor.project.config.prices),
        protocol_errors: await rs.protocolErrors(params.id),
        protocol_warnings: await rs.protocolWarnings(params.id),
        violations: await rs.violations(params.id),
      }),
    }),
    route({
      method: "GET",
      url: "/v1/runs/:id/events",
      tag: "runs",
      summary: `a run's events in the order they were stored (seq), oldest first by default (filter: type); ${PAGED}; live: /v1/runs/{id}/events/stream`,
      params: IdParams,
      query: RunEventsQuery,
      errors: [404],
      handler: async ({ params, query }) => rs.eventsPage(params.id, { type: query.type }, pageRequest(query)),
    }),
    route({
      method: "GET",
      url: "/v1/runs/:id/logs",
      tag: "runs",
      summary: "a run's non-event output (capped, secrets redacted)",
      params: IdParams,
      query: RunLogsQuery,
      errors: [404],
      handler: async ({ params, query }) => {
        await rs.get(params.id);
        return rs.logs(params.id, { stream: query.stream });
      },
    }),
    route({
      method: "POST",
      url: "/v1/entries/:id/runs",
      tag: "runs",
      summary:
        "start a run for an open entry, as the caller (humans only): the entry is claimed for the run and its addressee's role runs its runner (the OA gate asked first); 202 with the run once recorded, its progress on /v1/runs/{id}/events/stream",
      params: IdParams,
      status: 202,
      errors: [403, 404, 409],
      handler: async ({ actor, params }) => startRunFor(ctx, actor, params.id),
    }),
    route({
      method: "POST",
      url: "/v1/runs/:id/cancel",
      tag: "runs",
      summary: "cancel a run: its sprite is stopped and its entry canceled",
      params: IdParams,
      body: CancelBody,
      errors: [403, 404, 409],
      handler: async ({ actor, params, body }) => {
        await assertMayActOnRun(ctx, actor, await rs.get(params.id), "cancel");
        return ctx.supervisor.cancel(params.id, body.reason ?? `canceled by ${actor}`);
      },
    }),
    route({
      method: "POST",
      url: "/v1/runs/:id/resume",
      tag: "runs",
      summary:
        "resume a waiting run with inputs checked against its expected_inputs and an optional follow-up `message` to its agent (the same resume twice is a no-op); `queue: true` leaves it to any worker of its role, on any machine",
      params: IdParams,
      body: ResumeBody,
      status: 202,
      errors: [403, 404, 409],
      handler: async ({ actor, params, body }) => {
        await assertMayActOnRun(ctx, actor, await rs.get(params.id), "resume");
        if (body.queue) {
          const queued = await ctx.supervisor.queueResume(params.id, {
            inputs: body.inputs,
            context: body.context,
            message: body.message,
          });
          return { noop: queued.noop, queued: true, run: queued.run };
        }
        const result = await ctx.supervisor.resumeRun(params.id, {
          inputs: body.inputs,
          context: body.context,
          message: body.message,
        });
        // The relaunched sprite runs under this server; its outcome is in the run record and events.
        const finished = result.finished.catch(() => undefined);
        ctx.inFlight.add(finished);
        void finished.finally(() => ctx.inFlight.delete(finished));
        return { noop: result.noop, run: result.run };
      },
    }),
    route({
      method: "GET",
      url: "/v1/actions",
      tag: "runs",
      summary: `action requests of sprites and their outcomes (parameters redacted), oldest first by default (filters: run, state); ${PAGED}`,
      query: ActionListQuery,
      handler: async ({ query }) =>
        ctx.actions.page(ctx.project.config.project_id, { runId: query.run, state: query.state }, pageRequest(query)),
    }),
  ];
}

function forgeAndEnv(ctx: ServerContext): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/prs",
      tag: "forge",
      summary: `pull requests of the local forge by number, oldest first by default (filter: state); ${PAGED}`,
      query: PrListQuery,
      handler: async ({ query }) => ctx.forge.page({ state: query.state }, pageRequest(query)),
    }),
    route({
      method: "GET",
      url: "/v1/prs/:number",
      tag: "forge",
      summary: "one pull request of the local forge",
      params: PrParams,
      query: EmptyQuery,
      errors: [404],
      handler: async ({ params }) => ctx.forge.get(params.number),
    }),
    route({
      method: "GET",
      url: "/v1/prs/:number/comments",
      tag: "forge",
      summary: "a pull request's review comments, oldest first (on the whole change, or on one file's line)",
      params: PrParams,
      query: EmptyQuery,
      errors: [404],
      handler: async ({ params }) => ({ items: await ctx.pullComments.list(params.number) }),
    }),
    route({
      method: "POST",
      url: "/v1/prs/:number/comments",
      tag: "forge",
      summary:
        "add a review comment to a pull request as the caller: `body`, and `path` (and `line`) for a comment on a file (400 invalid_comment says what is wrong)",
      params: PrParams,
      body: PullCommentBody,
      status: 201,
      errors: [400, 404],
      handler: async ({ actor, params, body }) => ctx.pullComments.add(actor, params.number, body),
    }),
    ...(["merge", "close"] as const).map((decision) =>
      route({
        method: "POST",
        url: `/v1/prs/:number/${decision}`,
        tag: "forge",
        summary:
          decision === "merge"
            ? "merge an open pull request of the local forge into its base branch in the forge's repository, as the caller (humans only; the merge commit names them): the pull request and the base's new head (409 merge_conflict with the files when it cannot, nothing merged)"
            : "close an open pull request of the local forge without merging it, as the caller (humans only)",
        params: PrParams,
        errors: [403, 404, 409],
        handler: async ({ actor, params }) =>
          decidePullRequest(ctx.forge, ctx.project.config.humans, actor, params.number, decision),
      }),
    ),
    route({
      method: "GET",
      url: "/v1/env/proposals",
      tag: "environment",
      summary: `environment proposals by when last seen, newest first by default (filters: status, role), a pending one with its plan: what accepting it runs, where and how, or why it is refused; an accepted one with its change (applied, failed or undone); ${PAGED}`,
      query: ProposalListQuery,
      handler: async ({ query }) => {
        const page = await ctx.proposals.page({ status: query.status, role: query.role }, pageRequest(query));
        return { ...page, items: await describeProposals(ctx, page.items) };
      },
    }),
    ...(["accept", "reject"] as const).map((verb) =>
      route({
        method: "POST",
        url: `/v1/env/proposals/:id/${verb}`,
        tag: "environment",
        summary: `${verb} an environment proposal (humans only)`,
        params: IdParams,
        errors: [403, 404, 409],
        // Accepting applies the change (a failed install is in `change`, recorded, not applied).
        handler: async ({ actor, params }) => {
          if (verb === "reject") return ctx.proposals.reject(params.id, actor);
          const { proposal, change } = await ctx.envChanges.accept(params.id, actor);
          return { ...proposal, change };
        },
      }),
    ),
    route({
      method: "POST",
      url: "/v1/env/changes/:id/undo",
      tag: "environment",
      summary: "undo an applied environment change (by its id or its proposal's; humans only)",
      params: IdParams,
      errors: [403, 404, 409],
      handler: async ({ actor, params }) => ctx.envChanges.undo(params.id, actor),
    }),
  ];
}

function kaiAndOa(ctx: ServerContext): Route[] {
  const config = ctx.project.config;
  return [
    route({
      method: "POST",
      url: "/v1/kai",
      tag: "kai",
      summary: "ask Kai: a kai_request_v1 in, a kai_response_v1 out",
      body: KaiRequestSchema,
      response: KaiResponseSchema,
      handler: async ({ body }) => {
        const response = await answer(body, { config, sources: ctx.kai });
        if (response.status === "error")
          throw new UsageError("invalid_kai_request", `the kai_request_v1 is invalid: ${response.notes.join("; ")}`, {
            response,
          });
        return response;
      },
    }),
    route({
      method: "GET",
      url: "/v1/oa/snapshot",
      tag: "oa",
      summary: "the normalized OA state built from the kernel surfaces now (nothing is written)",
      query: EmptyQuery,
      response: OAStateSchema,
      errors: [503],
      handler: async () => buildState(ctx.oa, loadSurfaces(ctx.oa)),
    }),
    route({
      method: "GET",
      url: "/v1/oa/boot",
      tag: "oa",
      summary: "the OA boot envelope: kernel mode and what it allows",
      query: EmptyQuery,
      response: BootEnvelopeSchema,
      handler: async () => bootEnvelope(ctx.oa),
    }),
    route({
      method: "GET",
      url: "/v1/oa/guard",
      tag: "oa",
      summary: "the OA coherence guard (mode STRICT or HINT; ok false on failure)",
      query: GuardQuery,
      response: OAGuardOutputSchema,
      handler: async ({ query }) => runOaGuard(ctx.oa, query.mode),
    }),
  ];
}

/** Every JSON route of the API, in the order the OpenAPI document lists them. */
export function apiRoutes(ctx: ServerContext): Route[] {
  return [
    ...entries(ctx),
    ...runs(ctx),
    ...workRoutes(ctx),
    ...forgeAndEnv(ctx),
    ...kaiAndOa(ctx),
    ...consoleRoutes(ctx),
  ];
}
