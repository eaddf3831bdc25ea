import { ConflictError, NotFoundError, RefusedError, UsageError, contentHash } from "../../core/index.js";
import {
  Keyset,
  Where,
  inChunks,
  marks,
  type Page,
  type PageRequest,
  type SqlParam,
  type Store,
} from "../../store/index.js";
import { joinRunEvent } from "../runs/index.js";
import { applyAdjustment, emptyRoleEnvironment } from "./adjustments.js";
import { namesProblem, unsafeProposal } from "./names.js";

export const PROPOSAL_STATUSES = ["pending", "accepted", "rejected"] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/** The ENVIRONMENT_PROPOSAL payload fields the store keeps (the protocol schema validates them). */
export interface ProposalPayload {
  observed_failure: { phase: string; exit_code: number; stderr_hint: string };
  suggested_adjustment: { type: string; details: Record<string, unknown> };
  confidence: number;
  evidence: string[];
  scope: string;
}

export interface EnvironmentProposal {
  id: string;
  project_id: string;
  role: string;
  fingerprint: string;
  adjustment_type: string;
  details: Record<string, unknown>;
  observed_failure: ProposalPayload["observed_failure"];
  confidence: number;
  evidence: string[];
  scope: string;
  /** How many times sprites proposed it. */
  count: number;
  status: ProposalStatus;
  first_run_id: string;
  last_run_id: string;
  first_seen_at: string;
  last_seen_at: string;
  decided_by: string | null;
  decided_at: string | null;
  /** Order of decisions in the project (later accepted adjustments win). */
  decided_seq: number | null;
}

interface Row extends Omit<
  EnvironmentProposal,
  "details" | "observed_failure" | "evidence" | "count" | "confidence" | "decided_seq"
> {
  decided_seq: number | string | null;
  details_json: string;
  observed_failure_json: string;
  evidence_json: string;
  count: number | string;
  confidence: number | string;
}

function toProposal(r: Row): EnvironmentProposal {
  return {
    id: r.id,
    project_id: r.project_id,
    role: r.role,
    fingerprint: r.fingerprint,
    adjustment_type: r.adjustment_type,
    details: JSON.parse(r.details_json) as Record<string, unknown>,
    observed_failure: JSON.parse(r.observed_failure_json) as ProposalPayload["observed_failure"],
    confidence: Number(r.confidence),
    evidence: JSON.parse(r.evidence_json) as string[],
    scope: r.scope,
    count: Number(r.count),
    status: r.status,
    first_run_id: r.first_run_id,
    last_run_id: r.last_run_id,
    first_seen_at: r.first_seen_at,
    last_seen_at: r.last_seen_at,
    decided_by: r.decided_by,
    decided_at: r.decided_at,
    decided_seq: r.decided_seq === null ? null : Number(r.decided_seq),
  };
}

/**
 * The fingerprint that makes two proposals "the same": the failure's phase and exit code and the
 * adjustment's type and details. The stderr hint, confidence and evidence vary between runs of the
 * same problem, so they do not count.
 */
export function proposalFingerprint(p: ProposalPayload): string {
  return contentHash({
    phase: p.observed_failure.phase,
    exit_code: p.observed_failure.exit_code,
    type: p.suggested_adjustment.type,
    details: p.suggested_adjustment.details,
  });
}

export interface ProposalStoreOptions {
  store: Store;
  projectId: string;
  /** Actors allowed to decide (config `humans`). */
  humans: readonly string[];
  clock?: () => number;
}

export interface RecordResult {
  proposal: EnvironmentProposal;
  /** True the first time this fingerprint was proposed for the role. */
  first: boolean;
  /** False when this event was recorded before (a redelivery): nothing was counted. */
  counted: boolean;
}

/** ENVIRONMENT_PROPOSALs of a project: deduplicated per role and fingerprint, decided by a human. */
/**
 * Proposals by when they were last seen (`last_seen_ms, id`). A proposal seen again moves to the
 * front: a walk under way does not show it again (nor, if not reached yet, at all); start over to see it.
 */
export const PROPOSAL_KEYS = new Keyset(
  "proposals",
  [
    { sql: "last_seen_ms", type: "number" },
    { sql: "id", type: "string" },
  ],
  "newest",
);

export class ProposalStore {
  constructor(private readonly options: ProposalStoreOptions) {}

  private now(): [string, number] {
    const ms = (this.options.clock ?? Date.now)();
    return [new Date(ms).toISOString(), ms];
  }

  /** Record one ENVIRONMENT_PROPOSAL event of a run; the same event again (a redelivery) counts once. */
  async record(role: string, runId: string, eventId: string, payload: ProposalPayload): Promise<RecordResult> {
    const fingerprint = proposalFingerprint(payload);
    const id = `envp_${contentHash({ project: this.options.projectId, role, fingerprint }).slice(0, 12)}`;
    const [at, ms] = this.now();
    return this.options.store.transaction(async (tx) => {
      const seen = await tx.run(
        "INSERT INTO lattice_env_proposal_sightings (run_id, event_id, proposal_id) VALUES (?, ?, ?) ON CONFLICT (run_id, event_id) DO NOTHING",
        [runId, eventId, id],
      );
      if (seen.changes === 0) {
        const row = await tx.get<Row>(
          "SELECT p.* FROM lattice_env_proposals p JOIN lattice_env_proposal_sightings s ON s.proposal_id = p.id WHERE s.run_id = ? AND s.event_id = ?",
          [runId, eventId],
        );
        return { proposal: toProposal(row!), first: false, counted: false };
      }
      const updated = await tx.run(
        "UPDATE lattice_env_proposals SET count = count + 1, last_run_id = ?, last_seen_at = ?, last_seen_ms = ?, confidence = ?, evidence_json = ? WHERE id = ?",
        [runId, at, ms, payload.confidence, JSON.stringify(payload.evidence), id],
      );
      if (updated.changes === 0) {
        await tx.run(
          `INSERT INTO lattice_env_proposals (id, project_id, role, fingerprint, adjustment_type, details_json, observed_failure_json, confidence, evidence_json, scope, count, status, first_run_id, last_run_id, first_seen_at, last_seen_at, last_seen_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 'pending', ?, ?, ?, ?, ?)`,
          [
            id,
            this.options.projectId,
            role,
            fingerprint,
            payload.suggested_adjustment.type,
            JSON.stringify(payload.suggested_adjustment.details),
            JSON.stringify(payload.observed_failure),
            payload.confidence,
            JSON.stringify(payload.evidence),
            payload.scope,
            runId,
            runId,
            at,
            at,
            ms,
          ],
        );
      }
      const row = await tx.get<Row>("SELECT * FROM lattice_env_proposals WHERE id = ?", [id]);
      return { proposal: toProposal(row!), first: updated.changes === 0, counted: true };
    });
  }

  async get(id: string): Promise<EnvironmentProposal> {
    const row = await this.options.store.get<Row>(
      "SELECT * FROM lattice_env_proposals WHERE id = ? AND project_id = ?",
      [id, this.options.projectId],
    );
    if (!row)
      throw new NotFoundError(
        "proposal_not_found",
        `no environment proposal "${id}" in project ${this.options.projectId}: see \`pmagent env list\``,
      );
    return toProposal(row);
  }

  async list(filter: { status?: ProposalStatus; role?: string } = {}): Promise<EnvironmentProposal[]> {
    let sql = "SELECT * FROM lattice_env_proposals WHERE project_id = ?";
    const params: SqlParam[] = [this.options.projectId];
    if (filter.status) {
      sql += " AND status = ?";
      params.push(filter.status);
    }
    if (filter.role) {
      sql += " AND role = ?";
      params.push(filter.role);
    }
    const rows = await this.options.store.all<Row>(`${sql} ORDER BY last_seen_ms DESC, id`, params);
    return rows.map(toProposal);
  }

  /** One page of proposals by when they were last seen (newest first by default), by cursor. */
  async page(
    filter: { status?: ProposalStatus; role?: string } = {},
    request: PageRequest = {},
  ): Promise<Page<EnvironmentProposal>> {
    const where = new Where("project_id = ?", this.options.projectId)
      .when("status = ?", filter.status)
      .when("role = ?", filter.role);
    const plan = PROPOSAL_KEYS.plan(where, request);
    const rows = await this.options.store.all<Row & { last_seen_ms: number | string }>(
      `SELECT * FROM lattice_env_proposals WHERE ${where}${plan.sql}`,
      where.params,
    );
    return PROPOSAL_KEYS.page(rows, plan, (r) => [r.last_seen_ms, r.id], toProposal);
  }

  /**
   * The proposals these runs made by `untilMs`, each as it stood then: `count` is the number of
   * sightings (in any run) by then, and a decision made later leaves it `pending`.
   */
  async sightedIn(
    runIds: readonly string[],
    untilMs: number,
  ): Promise<Array<{ run_id: string; proposal: EnvironmentProposal }>> {
    const sightings = await inChunks(runIds, (ids) =>
      this.options.store.all<Row & { sighted_run_id: string; received_ms: number | string }>(
        `SELECT s.run_id AS sighted_run_id, e.received_ms, p.* FROM lattice_env_proposal_sightings s
         JOIN lattice_env_proposals p ON p.id = s.proposal_id
         ${joinRunEvent("e", "s.run_id", "s.event_id")}
         WHERE s.run_id IN (${marks(ids.length)}) AND e.received_ms <= ? AND p.project_id = ?`,
        [...ids, untilMs, this.options.projectId],
      ),
    );
    const proposalIds = [...new Set(sightings.map((s) => s.id))];
    const counts = new Map(
      (
        await inChunks(proposalIds, (ids) =>
          this.options.store.all<{ proposal_id: string; n: number | string }>(
            `SELECT s.proposal_id, COUNT(*) AS n FROM lattice_env_proposal_sightings s ${joinRunEvent("e", "s.run_id", "s.event_id")}
             WHERE s.proposal_id IN (${marks(ids.length)}) AND e.received_ms <= ? GROUP BY s.proposal_id`,
            [...ids, untilMs],
          ),
        )
      ).map((r) => [r.proposal_id, Number(r.n)]),
    );
    const seen = new Set<string>();
    return sightings
      .sort((a, b) => Number(a.received_ms) - Number(b.received_ms) || a.id.localeCompare(b.id))
      .filter((s) => !seen.has(`${s.sighted_run_id}\0${s.id}`) && seen.add(`${s.sighted_run_id}\0${s.id}`))
      .map((s) => {
        const p = toProposal(s);
        const decidedLater = p.decided_at !== null && Date.parse(p.decided_at) > untilMs;
        const asOf: EnvironmentProposal = decidedLater
          ? { ...p, status: "pending", decided_by: null, decided_at: null, decided_seq: null }
          : p;
        return { run_id: s.sighted_run_id, proposal: { ...asOf, count: counts.get(p.id) ?? p.count } };
      });
  }

  /** Refuse an actor who is not one of the config's humans (`what` they tried, e.g. "undo an environment change"). */
  requireHuman(actor: string, what: string): void {
    if (!actor)
      throw new UsageError("actor_required", "say who decides: pass --as NAME (a human listed in the config's humans)");
    if (!this.options.humans.includes(actor)) {
      throw new RefusedError(
        "not_human",
        `only a human may ${what}; "${actor}" is not listed in the config's humans (${this.options.humans.join(", ")})`,
      );
    }
  }

  /** The accepted proposals for a role's runs: its own and every global_candidate one, oldest decision first. */
  async acceptedFor(role: string): Promise<EnvironmentProposal[]> {
    const rows = await this.options.store.all<Row>(
      "SELECT * FROM lattice_env_proposals WHERE project_id = ? AND status = 'accepted' AND (role = ? OR scope = 'global_candidate') ORDER BY decided_seq, id",
      [this.options.projectId, role],
    );
    return rows.map(toProposal);
  }

  accept(id: string, actor: string): Promise<EnvironmentProposal> {
    return this.decide(id, actor, "accepted");
  }

  reject(id: string, actor: string): Promise<EnvironmentProposal> {
    return this.decide(id, actor, "rejected");
  }

  private async decide(id: string, actor: string, status: "accepted" | "rejected"): Promise<EnvironmentProposal> {
    this.requireHuman(actor, `${status === "accepted" ? "accept" : "reject"} an environment proposal`);
    const current = await this.get(id);
    // An accepted adjustment must be usable by later runs and name nothing an installer must not be given: checked now, not at run time.
    if (status === "accepted") {
      const problem = namesProblem(current.adjustment_type, current.details);
      if (problem) throw unsafeProposal(current.id, current.adjustment_type, problem);
      applyAdjustment(emptyRoleEnvironment(current.role), current);
    }
    if (current.status !== "pending") {
      throw new ConflictError(
        "proposal_decided",
        `environment proposal ${id} was already ${current.status} by ${current.decided_by ?? "?"} at ${current.decided_at ?? "?"}`,
      );
    }
    const [at] = this.now();
    // decided_seq orders decisions (later ones win in a role's environment) even within one millisecond.
    const r = await this.options.store.run(
      "UPDATE lattice_env_proposals SET status = ?, decided_by = ?, decided_at = ?, decided_seq = (SELECT COALESCE(MAX(decided_seq), 0) + 1 FROM lattice_env_proposals WHERE project_id = ?) WHERE id = ? AND status = 'pending'",
      [status, actor, at, this.options.projectId, id],
    );
    if (r.changes === 0)
      throw new ConflictError("proposal_decided", `environment proposal ${id} was decided by someone else meanwhile`);
    return this.get(id);
  }
}
