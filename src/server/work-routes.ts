/** Routes that start and stop work from the console: hosted workers, running a run again, the agents to pick from, config reload. */
import { z } from "zod";
import { configuredAgents } from "../lattice/index.js";
import { reloadConfig } from "./config-reload.js";
import type { ServerContext } from "./context.js";
import { assertHuman } from "./permissions.js";
import { route, type Route } from "./route.js";
import { EmptyQuery, IdParams } from "./schemas.js";
import { rerunFor } from "./start-run.js";
import { HostedWorkerSchema, WorkerStartBody } from "./workers.js";

export const RetryBody = z
  .object({
    agent: z.string().min(1, "expected an agent name, or leave agent out to run the same agent again").optional(),
  })
  .strict()
  .default({});

const AgentSchema = z.object({
  name: z.string(),
  role: z.string().describe("the role whose runner settings it runs with"),
  model: z.string().nullable(),
});

export function workRoutes(ctx: ServerContext): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/workers",
      tag: "workers",
      summary:
        "the workers this server hosts: role, concurrency, agent, state, the runs under way in their slots and the runs they finished",
      query: EmptyQuery,
      response: z.object({ items: z.array(HostedWorkerSchema) }),
      handler: async () => ({ items: ctx.workers.list() }),
    }),
    route({
      method: "POST",
      url: "/v1/workers",
      tag: "workers",
      summary:
        "start a worker in this server for a role (humans only): it claims the role's open entries and runs them, `concurrency` at once (1–64, default 1), with the role's runner or a configured `agent` (GET /v1/agents)",
      body: WorkerStartBody,
      response: HostedWorkerSchema,
      status: 201,
      errors: [403],
      handler: async ({ actor, body }) => {
        assertHuman(ctx, actor, "start a worker");
        return ctx.workers.start(actor, body);
      },
    }),
    route({
      method: "DELETE",
      url: "/v1/workers/:id",
      tag: "workers",
      summary:
        "stop a hosted worker (humans only), as `pmagent worker` stops on SIGTERM: its runs under way are stopped and their entries left for another worker to take over; answered once it has stopped",
      params: IdParams,
      response: HostedWorkerSchema,
      errors: [403, 404],
      handler: async ({ actor, params }) => {
        assertHuman(ctx, actor, "stop a worker");
        return ctx.workers.stop(params.id);
      },
    }),
    route({
      method: "GET",
      url: "/v1/agents",
      tag: "workers",
      summary:
        "the agents a worker or a run again may be given: each coding-agent CLI a role of the config runs, with that role's settings",
      query: EmptyQuery,
      response: z.object({ items: z.array(AgentSchema) }),
      handler: async () => ({ items: configuredAgents(ctx.project.config) }),
    }),
    route({
      method: "POST",
      url: "/v1/runs/:id/retry",
      tag: "runs",
      summary:
        "run a finished run's entry again (humans only): with the same command (a retry) or another configured `agent`; an entry already finished is re-opened as a new entry (`reopened_from`); 202 with the new run once recorded",
      params: IdParams,
      body: RetryBody,
      status: 202,
      errors: [403, 404, 409],
      handler: async ({ actor, params, body }) => rerunFor(ctx, actor, params.id, body.agent),
    }),
    route({
      method: "POST",
      url: "/v1/config/reload",
      tag: "workers",
      summary:
        "re-read pmagent.config.json (humans only; SIGHUP does the same): lanes, roles and runners apply at once; a config that does not parse, or changes what is read only at start (project_id, storage, humans, server), is refused and the config in use kept",
      query: EmptyQuery,
      errors: [403, 409, 503],
      handler: async ({ actor }) => {
        assertHuman(ctx, actor, "reload the config");
        return reloadConfig(ctx.project);
      },
    }),
  ];
}
