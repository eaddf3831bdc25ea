/**
 * Workers hosted by `pmagent serve`: started and stopped over the API, each a lattice Worker for
 * one role on the server's one Supervisor (a second Supervisor in this process would take the
 * first one's runs for orphans when it reconciles: the check is by pid). Stopping one does what
 * the CLI worker does on SIGTERM: its runs under way are stopped and their entries left for
 * another worker to take over.
 */
import { z } from "zod";
import { findRole, type Project } from "../config/index.js";
import { NotFoundError, UsageError, randomHex } from "../core/index.js";
import { agentArgv, Worker, type RunRecord, type Supervisor } from "../lattice/index.js";

/** At most this many runs at once in one hosted worker (as `pmagent worker --concurrency`). */
export const MAX_WORKER_CONCURRENCY = 64;

export const WorkerStartBody = z
  .object({
    role: z.string().min(1, "expected a role name"),
    concurrency: z
      .number({ error: `concurrency must be a whole number from 1 to ${MAX_WORKER_CONCURRENCY}` })
      .int(`concurrency must be a whole number from 1 to ${MAX_WORKER_CONCURRENCY}`)
      .min(1, `concurrency must be at least 1 (one run at a time)`)
      .max(MAX_WORKER_CONCURRENCY, `concurrency must be at most ${MAX_WORKER_CONCURRENCY}`)
      .default(1),
    agent: z.string().min(1, "expected an agent name, or leave agent out for the role's own runner").optional(),
  })
  .strict();

const WORKER_STATES = ["running", "stopping", "stopped", "failed"] as const;

export const HostedWorkerSchema = z.object({
  id: z.string(),
  role: z.string(),
  concurrency: z.number().int(),
  agent: z.string().nullable().describe("the agent chosen for the role's runs; null: the role's own runner"),
  state: z.enum(WORKER_STATES),
  started_by: z.string(),
  started_at: z.string(),
  stopped_at: z.string().nullable(),
  error: z.string().nullable().describe("why a failed worker stopped"),
  current: z
    .array(z.object({ run_id: z.string(), entry_id: z.string(), since: z.string() }))
    .describe("the runs under way in its slots"),
  finished: z.record(z.string(), z.number().int()).describe("runs it finished, by state"),
});
export type HostedWorker = z.output<typeof HostedWorkerSchema>;

interface Hosted {
  view: HostedWorker;
  stop: AbortController;
  done: Promise<void>;
}

export class HostedWorkers {
  private readonly workers = new Map<string, Hosted>();

  constructor(private readonly ctx: { project: Project; supervisor: Supervisor }) {}

  list(): HostedWorker[] {
    return [...this.workers.values()].map((w) => structuredClone(w.view));
  }

  get(id: string): HostedWorker {
    return structuredClone(this.find(id).view);
  }

  /** Start a worker for `role` (refused: an unknown role or agent, a role the agent may not run). */
  start(actor: string, o: z.output<typeof WorkerStartBody>): HostedWorker {
    const config = this.ctx.project.config;
    const { role } = findRole(config, o.role);
    const command = agentArgv(config, role, o.agent);
    if (!command)
      throw new UsageError(
        "no_sprite_command",
        `role ${role.name} has no runner.command or runner.agent in pmagent.config.json: configure one, or pick an agent`,
      );
    const id = `serve-${randomHex(4)}`;
    const view: HostedWorker = {
      id,
      role: role.name,
      concurrency: o.concurrency,
      agent: o.agent ?? role.runner?.agent ?? null,
      state: "running",
      started_by: actor,
      started_at: new Date().toISOString(),
      stopped_at: null,
      error: null,
      current: [],
      finished: {},
    };
    const worker = new Worker({
      supervisor: this.ctx.supervisor,
      roles: [role.name],
      id: `${id}@${this.ctx.supervisor.host}:${process.pid}`,
      concurrency: o.concurrency,
      ...(o.agent !== undefined ? { commands: { [role.name]: command } } : {}),
      onStarted: (runId, _role, entryId) =>
        view.current.push({ run_id: runId, entry_id: entryId, since: new Date().toISOString() }),
      onRun: (run: RunRecord) => {
        view.current = view.current.filter((c) => c.run_id !== run.id);
        view.finished[run.state] = (view.finished[run.state] ?? 0) + 1;
      },
    });
    const stop = new AbortController();
    const done = worker
      .run(stop.signal)
      .then(
        () => void (view.state = "stopped"),
        (err: unknown) => {
          view.state = "failed";
          view.error = (err as Error).message;
        },
      )
      .finally(() => {
        view.stopped_at = new Date().toISOString();
        view.current = [];
      });
    this.workers.set(id, { view, stop, done });
    return structuredClone(view);
  }

  /** Stop a worker: its runs under way are stopped, their entries left for another worker; resolves once it has. */
  async stop(id: string): Promise<HostedWorker> {
    const w = this.find(id);
    if (w.view.state === "running") w.view.state = "stopping";
    w.stop.abort();
    await w.done;
    return structuredClone(w.view);
  }

  /** Stop every worker (the server is closing). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.workers.keys()].map((id) => this.stop(id)));
  }

  private find(id: string): Hosted {
    const w = this.workers.get(id);
    if (!w)
      throw new NotFoundError("worker_not_found", `no worker ${id} in this server: GET /v1/workers lists them`, {
        worker: id,
      });
    return w;
  }
}
