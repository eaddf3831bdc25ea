/**
 * `pmagent worker`: claims open entries for its roles (the pick rule, leases) and runs each with
 * the role's configured command, until stopped. Without a gate the store picks and claims in one
 * step. With a gate, each candidate is asked before it is claimed: a DENY leaves the entry open
 * (the reason is recorded) and is asked again only when the entry changes or after `gateRecheckMs`.
 *
 * With `concurrency` N the worker runs up to N sprites at once in this one process: N slots, each
 * claiming and running on its own, so one slow sprite never holds the others' entries back.
 */
import type { Status, StoredEntry } from "../../blackboard/index.js";
import { findRole, type Config } from "../../config/index.js";
import { UsageError } from "../../core/index.js";
import { runnerArgv } from "../agents/index.js";
import type { GateDecision, RunRecord } from "../runs/index.js";
import { WORKER_STOPPED, type Supervisor } from "./supervisor.js";

/** Candidates read at first for a gated claim: the backlog is read whole only when none of these serves. */
const CANDIDATE_PAGE = 32;

export interface WorkerOptions {
  supervisor: Supervisor;
  roles: string[];
  /** Claimer identity; default `worker@<machine>:pid` (the supervisor's machine name). */
  id?: string;
  /** How long to sleep when nothing is open (a notification wakes it sooner). */
  pollMs?: number;
  gateRecheckMs?: number;
  /** Stop when no entry is open instead of waiting for more. */
  once?: boolean;
  /** How many runs at once (default 1). */
  concurrency?: number;
  /** The sprite argv per role, in place of its configured runner (a hosted worker's chosen agent). */
  commands?: Readonly<Record<string, string[]>>;
  /** Progress, for a person watching: an entry claimed, its run started, nothing open for now. */
  onClaimed?: (role: string, entry: StoredEntry) => void;
  onStarted?: (runId: string, role: string, entryId: string) => void;
  onIdle?: () => void;
  onRun?: (run: RunRecord) => void;
}

export class Worker {
  readonly id: string;
  private readonly o: WorkerOptions;
  /** Runs under way in this worker's slots. */
  private readonly current = new Set<string>();
  readonly concurrency: number;

  constructor(options: WorkerOptions) {
    this.o = options;
    this.id = options.id ?? `worker@${options.supervisor.host}:${process.pid}`;
    this.concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) {
      throw new UsageError(
        "invalid_concurrency",
        `a worker's concurrency must be a whole number of at least 1, got ${options.concurrency}`,
      );
    }
    // Unknown roles are refused up front, naming the configured ones.
    for (const role of options.roles) findRole(this.config, role);
  }

  private get config(): Config {
    return this.o.supervisor.project.config;
  }

  /**
   * Candidates of the pick rule, oldest first: open entries, and in_progress ones whose lease
   * expired. The oldest page first (the gate usually allows one of them), the whole backlog only
   * when that page was full and none of it served.
   */
  private async *candidates(role: string, kinds: readonly string[]): AsyncGenerator<StoredEntry> {
    const board = this.o.supervisor.board;
    const eligible = (entries: StoredEntry[]) => {
      const now = Date.now();
      return entries.filter(
        (s) =>
          kinds.includes(s.entry.kind) &&
          (s.entry.status === "open" ||
            (s.claimed_by !== null && s.lease_expires_at !== null && Date.parse(s.lease_expires_at) < now)),
      );
    };
    const filter = { status: ["open", "in_progress"] as Status[], to: role };
    const page = await board.list({ ...filter, limit: CANDIDATE_PAGE });
    yield* eligible(page);
    if (page.length < CANDIDATE_PAGE) return;
    const seen = new Set(page.map((s) => s.entry.id));
    for (const s of eligible(await board.list(filter))) if (!seen.has(s.entry.id)) yield s;
  }

  /** Claim the next entry for `role` (that the gate, if any, allows); undefined when there is none. */
  async claimNext(role: string): Promise<{ entry: StoredEntry; decided: GateDecision | null } | undefined> {
    const sup = this.o.supervisor;
    const { role: cfg } = findRole(this.config, role);
    if (!sup.gated) {
      // Nothing to ask first: the store applies the pick rule (one statement on PostgreSQL, SKIP
      // LOCKED) instead of this worker reading the role's whole backlog for every claim.
      const claimed = await sup.board.claim(this.id, role, cfg.allowed_kinds);
      return claimed ? { entry: claimed, decided: null } : undefined;
    }
    const command = this.o.commands?.[role] ?? runnerArgv(cfg.runner, this.config) ?? [];
    for await (const candidate of this.candidates(role, cfg.allowed_kinds)) {
      const last = await sup.runs.lastGateDecision(candidate.entry.id);
      if (
        last?.decision === "DENY" &&
        last.entry_version === candidate.version &&
        Date.now() - Date.parse(last.at) < (this.o.gateRecheckMs ?? 300_000)
      )
        continue;
      const decided = await sup.askGate(role, candidate, command);
      if (decided?.decision === "DENY") continue;
      const claimed = await sup.board.claim(this.id, role, cfg.allowed_kinds, undefined, {
        entryId: candidate.entry.id,
      });
      if (claimed) return { entry: claimed, decided };
    }
    return undefined;
  }

  /** Claim and run until `signal` aborts (or, with `once`, until nothing is open). */
  async run(signal: AbortSignal): Promise<void> {
    const sup = this.o.supervisor;
    const onAbort = () => {
      for (const id of this.current) void sup.cancel(id, WORKER_STOPPED).catch(() => undefined);
    };
    signal.addEventListener("abort", onAbort);
    try {
      await sup.reconcile();
      await Promise.all(Array.from({ length: this.concurrency }, () => this.slot(signal)));
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** One slot: claim an entry of any of the roles, run it, again; wait when nothing is open. */
  private async slot(signal: AbortSignal): Promise<void> {
    const sup = this.o.supervisor;
    while (!signal.aborted) {
      // A queued resume first: its person is waiting on it, and its run holds its entry already.
      let worked = await this.resumeQueued();
      for (const role of this.o.roles) {
        if (signal.aborted) break;
        const next = await this.claimNext(role);
        if (!next) continue;
        worked = true;
        const entryId = next.entry.entry.id;
        this.o.onClaimed?.(role, next.entry);
        // A takeover: the previous claimer's run, if any is left, must not run on beside ours.
        await sup.fenceEntry(entryId, this.id);
        let runId: string | undefined;
        const onStarted = (id: string) => {
          runId = id;
          this.current.add(id);
          this.o.onStarted?.(id, role, entryId);
        };
        try {
          const run = await sup.startRun({
            role,
            entryId,
            worker: this.id,
            command: this.o.commands?.[role],
            decided: next.decided ?? undefined,
            onStarted,
          });
          this.o.onRun?.(run);
        } finally {
          if (runId !== undefined) this.current.delete(runId);
        }
      }
      if (worked || signal.aborted) continue;
      if (this.o.once) break;
      this.o.onIdle?.();
      await this.waitForWork(signal);
    }
  }

  /** Carry out one queued resume of this worker's roles, if there is one; whether there was. */
  private async resumeQueued(): Promise<boolean> {
    const r = await this.o.supervisor.takeQueuedResume(this.o.roles);
    if (!r) return false;
    const { id, role, entry_id } = r.run;
    this.current.add(id);
    this.o.onStarted?.(id, role, entry_id ?? id);
    try {
      this.o.onRun?.(await r.finished);
    } finally {
      this.current.delete(id);
    }
    return true;
  }

  private async waitForWork(signal: AbortSignal): Promise<void> {
    const wake = new AbortController();
    const stop = () => wake.abort();
    signal.addEventListener("abort", stop, { once: true });
    try {
      await Promise.race(
        this.o.roles.map((r) => this.o.supervisor.board.waitForOpen(r, this.o.pollMs ?? 1000, wake.signal)),
      );
    } finally {
      wake.abort();
      signal.removeEventListener("abort", stop);
    }
  }
}
