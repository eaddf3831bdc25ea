/**
 * Aya and Sho through the model: with `model` configured, `pmagent lane-sprite aya|sho` (and
 * `pmagent agent --lane-artifact KIND`) run the LLM role agent with a task of the lane — an explicit
 * strict output schema, the documents' current text as context, and the answer mapped to the
 * artifact the next role reads. Aya answers as the orchestrator, Sho as the reviewer at the lane's
 * gate; the deterministic guard still decides what Sho may accept.
 */
import { z } from "zod";
import { UsageError, parseWith } from "../../core/index.js";
import {
  DEFAULT_REVIEW_LEVEL,
  outputSchemaFromZod,
  runRoleAgent,
  type AgentRole,
  type RoleAgentReport,
  type RoleAgentTask,
  type ReviewLevel,
} from "../../prompt/index.js";
import {
  CHANGE_TYPES,
  DocUpdateRequestDetailsSchema,
  PROPOSAL_VERSION,
  REVIEW_VERSION,
  type DocUpdateProposal,
} from "./schema.js";
import { pathRefusal } from "./guard.js";
import { buildProposal, buildReview, type ReviewDecisionInput } from "./formats.js";
import { docReader, guardedUpdates, readProposalArtifact } from "./review.js";
import { PROPOSAL_DIR, REVIEW_DIR, artifactPath, readDoc, saveRepoArtifact, type LaneRunContext } from "./context.js";

/** A document longer than this is cut in the model's context (and the model is told so). */
export const MAX_DOC_CONTEXT_CHARS = 60_000;

/** The placements the model chooses from (a section edit needs a heading the model would have to copy exactly). */
const MODEL_CHANGE_TYPES = CHANGE_TYPES.filter((c) => c !== "section") as ["append", "replace", "create"];

const filled = (what: string) => z.string().refine((s) => s.trim() !== "", `${what} must not be empty`);

/** Aya's answer: OpenAI strict mode (every field required, no extra keys); ids are numbered here. */
export const ProposalAnswerSchema = z.strictObject({
  summary: filled("summary").describe("what the proposal changes and why, in one or two sentences"),
  updates: z
    .array(
      z.strictObject({
        path: filled("path").describe("repository-relative path of the document, inside the lane's allowed paths"),
        reason: filled("reason").describe("why this document needs the change"),
        change_type: z
          .enum(MODEL_CHANGE_TYPES)
          .describe(
            "append: add the Markdown at the end; replace: the Markdown is the whole new document; create: a new file",
          ),
        suggested_markdown: filled("suggested_markdown").describe(
          "the Markdown to append, the whole new document (replace), or the new file's text (create)",
        ),
      }),
    )
    .min(1)
    .describe("the documentation updates, at least one"),
});
export type ProposalAnswer = z.output<typeof ProposalAnswerSchema>;

/** Sho's answer for one proposal's updates: one decision per update, naming the update by its id. */
export function reviewAnswerSchema(updates: readonly { id: string }[], level: ReviewLevel) {
  const ids = updates.map((u) => u.id) as [string, ...string[]];
  return z
    .strictObject({
      level: z.enum([level]).describe("the review level stated in your instructions"),
      decision: z
        .enum(["approve", "revise", "block"])
        .describe("approve: go on; revise: needs changes; block: must not go on"),
      summary: filled("summary").describe("why, in a few sentences"),
      updates: z
        .array(
          z.strictObject({
            update_id: z.enum(ids).describe("the id of the proposed update"),
            decision: z.enum(["accept", "reject"]),
            reasons: z.array(z.string()).describe("why it is rejected, or advice; empty when accepted without remark"),
          }),
        )
        .describe("exactly one decision for each proposed update"),
    })
    .superRefine((answer, ctx) => {
      const seen = answer.updates.map((u) => u.update_id);
      const twice = ids.filter((id) => seen.filter((s) => s === id).length > 1);
      const missing = ids.filter((id) => !seen.includes(id));
      if (twice.length > 0)
        ctx.addIssue({ code: "custom", path: ["updates"], message: `decides ${twice.join(", ")} more than once` });
      if (missing.length > 0)
        ctx.addIssue({ code: "custom", path: ["updates"], message: `has no decision for ${missing.join(", ")}` });
    });
}
type ReviewAnswer = z.output<ReturnType<typeof reviewAnswerSchema>>;

/** The documents' current text as context for the model; paths outside the allowed ones are never read. */
export function documentsContext(ctx: Pick<LaneRunContext, "workspace" | "lane">, paths: readonly string[]): string {
  const { lane } = ctx;
  const out = [
    `Lane ${lane.layer}/${lane.name}. Allowed paths: ${lane.allowed_paths.join(", ")}. STATE document: ${lane.state_file}.`,
  ];
  for (const path of [...new Set(paths)]) {
    const refused = pathRefusal(path, lane.allowed_paths);
    if (refused) {
      out.push("", `## ${path}`, "", `Not shown: ${refused}.`);
      continue;
    }
    const text = readDoc(ctx.workspace, path);
    if (text === null) {
      out.push("", `## ${path}`, "", "The file does not exist yet (use change_type create).");
      continue;
    }
    const cut = text.length > MAX_DOC_CONTEXT_CHARS;
    out.push(
      "",
      `## ${path} (current text${cut ? `, the first ${MAX_DOC_CONTEXT_CHARS} of ${text.length} characters` : ""})`,
      "",
      "````markdown",
      cut ? text.slice(0, MAX_DOC_CONTEXT_CHARS) : text.replace(/\n$/, ""),
      "````",
    );
  }
  return out.join("\n");
}

const GUARD_RULES =
  "an update may not shrink its document below 70% of its lines, leave it ending mid-sentence or inside an open code block, or touch a path outside the allowed paths";

/** Aya as the orchestrator: the request → doc_update_proposal_v1. */
export function ayaTask(ctx: LaneRunContext, now: () => Date = () => new Date()): RoleAgentTask {
  return {
    name: PROPOSAL_VERSION,
    prepare() {
      const { entry, lane } = ctx;
      const details = parseWith(
        DocUpdateRequestDetailsSchema,
        entry.payload.details ?? {},
        `payload.details of entry ${entry.id}`,
        "invalid_request",
      );
      const paths = [
        ...(entry.target_docs.length > 0 ? entry.target_docs : [lane.state_file]),
        ...(details.updates ?? []).map((u) => u.path),
      ];
      return {
        outputSchema: outputSchemaFromZod("doc_update_proposal", ProposalAnswerSchema),
        turnContext: [
          `You are ${ctx.role}, the proposal step of the doc_update lane. Turn the Human request below into concrete documentation updates.`,
          "Base every update on the documents' current text given in the environment context; keep their existing sections.",
          `Sho reviews your proposal with a guard: ${GUARD_RULES}. Prefer append; use replace only with the whole new document.`,
        ].join("\n"),
        environmentContext: documentsContext(ctx, paths),
      };
    },
    finish(step) {
      const answer = step.answer as ProposalAnswer;
      const proposal = buildProposal({
        projectId: ctx.project.config.project_id,
        cycleId: ctx.cycleId,
        requestEntryId: ctx.entry.id,
        summary: answer.summary.trim(),
        now: now(),
        updates: answer.updates.map((u, i) => ({ id: `u${i + 1}`, ...u })),
      });
      saveRepoArtifact(
        ctx,
        PROPOSAL_VERSION,
        artifactPath(PROPOSAL_DIR, ctx.cycleId, now(), PROPOSAL_VERSION),
        proposal,
        { updates: proposal.updates.length, model: step.request.model },
      );
      const paths = [...new Set(proposal.updates.map((u) => u.target.path))].join(", ");
      return {
        status: "success",
        summary: `proposal for ${ctx.cycleId}: ${proposal.updates.length} update(s) to ${paths}`,
        revision_requested: false,
        requested_changes: [],
      };
    },
  };
}

/**
 * One update's decision: the guard first (a model cannot accept what it refuses), then the
 * model's — whose reject binds at soft_gate and hard_gate and is advice only at feedback.
 */
export function decideUpdate(
  guard: { reasons: readonly string[]; linesBefore: number | null; linesAfter: number | null },
  model: { decision: "accept" | "reject"; reasons: readonly string[] },
  level: ReviewLevel,
): { decision: "accept" | "reject"; reasons: string[]; lines_before: number | null; lines_after: number | null } {
  const lines = { lines_before: guard.linesBefore, lines_after: guard.linesAfter };
  const said = model.reasons.map((r) => r.trim()).filter((r) => r !== "");
  if (guard.reasons.length > 0)
    return {
      decision: "reject",
      reasons: [...guard.reasons, ...(model.decision === "reject" ? said.map((r) => `reviewer: ${r}`) : [])],
      ...lines,
    };
  if (model.decision === "reject" && level !== "feedback")
    return {
      decision: "reject",
      reasons: said.length > 0 ? said.map((r) => `reviewer: ${r}`) : ["rejected by the reviewer (no reason given)"],
      ...lines,
    };
  return { decision: "accept", reasons: [], ...lines };
}

/** Sho as the reviewer at the lane's gate: the proposal → doc_update_review_v1. */
export function shoTask(ctx: LaneRunContext, level: ReviewLevel, now: () => Date = () => new Date()): RoleAgentTask {
  let read: { proposal: DocUpdateProposal; path: string } | undefined;
  let guarded: ReviewDecisionInput[] = [];
  return {
    name: REVIEW_VERSION,
    prepare() {
      read = readProposalArtifact(ctx);
      guarded = guardedUpdates(read.proposal, docReader(ctx.workspace, ctx.lane.allowed_paths), ctx.lane.allowed_paths);
      const guards = guarded.map(
        (g) =>
          `- ${g.update.id} (${g.update.path}): ${g.reasons.length === 0 ? "passes" : `refused — ${g.reasons.join("; ")}`}`,
      );
      return {
        outputSchema: outputSchemaFromZod(
          "doc_update_review",
          reviewAnswerSchema(
            guarded.map((g) => g.update),
            level,
          ),
        ),
        turnContext: [
          `You are ${ctx.role}, the review step of the doc_update lane. Review Aya's proposal below update by update: accept or reject each one, with reasons for a rejection.`,
          `A deterministic guard also checks every update (${GUARD_RULES}); an update it refuses is rejected whatever you decide. Its verdicts:`,
          ...guards,
        ].join("\n"),
        environmentContext: `${documentsContext(
          ctx,
          guarded.map((g) => g.update.path),
        )}\n\n## The proposal (${PROPOSAL_VERSION}, ${read.path}; each update's id is given in the verdicts above, in order)\n\n\`\`\`json\n${JSON.stringify(read.proposal, null, 2)}\n\`\`\``,
      };
    },
    finish(step) {
      const { proposal, path } = read!;
      const answer = step.answer as ReviewAnswer;
      const { sprite } = ctx;
      const decisions: ReviewDecisionInput[] = guarded.map((g) => {
        const u = g.update;
        const m = answer.updates.find((a) => a.update_id === u.id)!;
        const d = decideUpdate({ reasons: g.reasons, linesBefore: g.linesBefore, linesAfter: g.linesAfter }, m, level);
        if (m.decision === "accept" && d.decision === "reject")
          sprite.info(`the guard overrides the reviewer's accept of ${u.id} (${u.path}): ${g.reasons.join("; ")}`, {
            kind: "guard_override",
          });
        if (m.decision === "reject" && d.decision === "accept")
          sprite.info(
            `reviewer advice on ${u.id} (${u.path}) at feedback level, not binding: ${m.reasons.join("; ") || "no reason given"}`,
            { kind: "review_advice" },
          );
        return { ...g, decision: d.decision, reasons: d.reasons };
      });
      for (const d of decisions)
        sprite.info(
          `${d.decision === "accept" ? "accepted" : "rejected"} ${d.update.id} (${d.update.path})${d.reasons.length ? `: ${d.reasons.join("; ")}` : ""}`,
          { kind: "review_decision" },
        );
      const gate = step.review!;
      const review = buildReview({
        proposal,
        proposalRef: path,
        decisions,
        now: now(),
        cycleId: ctx.cycleId,
        notes: [`Reviewer (${gate.level}): ${gate.decision} — ${answer.summary.trim()}`],
      });
      const accepted = review.update_judgements.filter((d) => d.decision === "accept").length;
      const rejected = decisions.length - accepted;
      saveRepoArtifact(ctx, REVIEW_VERSION, artifactPath(REVIEW_DIR, ctx.cycleId, now(), REVIEW_VERSION), review, {
        accepted,
        rejected,
        level: gate.level,
        decision: gate.decision,
        risk_level: review.overall_assessment.risk_level,
      });
      const counts = `${accepted} accepted, ${rejected} rejected`;
      const verdict = `review ${gate.decision} at ${gate.level}: ${gate.reason}`;
      if (gate.result === "failure")
        return {
          status: "failure",
          summary: `review of ${ctx.cycleId} blocks the lane (${counts}); ${verdict}`,
          revision_requested: false,
          requested_changes: [],
        };
      if (accepted === 0) {
        return {
          status: "failure",
          summary: `review of ${ctx.cycleId}: every update was rejected (${decisions.map((d) => d.reasons.join("; ")).join(" | ")})`,
          revision_requested: false,
          requested_changes: [],
        };
      }
      const changes = gate.revision_requested
        ? [
            ...decisions
              .filter((d) => d.decision === "reject")
              .map((d) => `${d.update.id} (${d.update.path}): ${d.reasons.join("; ")}`),
            ...(rejected === 0 ? [gate.reason] : []),
          ]
        : [];
      return {
        status: "success",
        summary: `review of ${ctx.cycleId}: ${counts}; ${verdict}`,
        revision_requested: gate.revision_requested,
        requested_changes: changes,
      };
    },
  };
}

/** The lane's model-backed roles, by the artifact each one leaves. */
export const LANE_AGENT_ARTIFACTS = { [PROPOSAL_VERSION]: "aya", [REVIEW_VERSION]: "sho" } as const;
export type LaneAgentArtifact = keyof typeof LANE_AGENT_ARTIFACTS;

const AGENT_ROLE_OF: Record<LaneAgentArtifact, AgentRole> = {
  [PROPOSAL_VERSION]: "orchestrator",
  [REVIEW_VERSION]: "reviewer",
};

export function parseLaneArtifact(value: string): LaneAgentArtifact {
  if (!(value in LANE_AGENT_ARTIFACTS))
    throw new UsageError(
      "unknown_lane_artifact",
      `unknown lane artifact "${value}": expected one of ${Object.keys(LANE_AGENT_ARTIFACTS).join(", ")}`,
    );
  return value as LaneAgentArtifact;
}

/** The prompt role that produces a lane artifact (orchestrator for a proposal, reviewer for a review). */
export function laneAgentRole(artifact: LaneAgentArtifact): AgentRole {
  return AGENT_ROLE_OF[artifact];
}

export interface LaneAgentOptions {
  artifact: LaneAgentArtifact;
  /** Sho only; default: the lane's `review_level`, else hard_gate. */
  reviewLevel?: ReviewLevel;
  cycle?: number;
  stream?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** Run Aya's or Sho's step through the LLM role agent: one code path for lane-sprite and agent. */
export async function runLaneAgent(ctx: LaneRunContext, options: LaneAgentOptions): Promise<RoleAgentReport> {
  const role = laneAgentRole(options.artifact);
  const level =
    role === "reviewer" ? (options.reviewLevel ?? ctx.lane.review_level ?? DEFAULT_REVIEW_LEVEL) : undefined;
  return runRoleAgent({
    role,
    reviewLevel: level,
    cycle: options.cycle,
    stream: options.stream,
    project: ctx.project,
    env: options.env,
    sprite: ctx.sprite,
    entryFile: ctx.entryFile,
    task: role === "reviewer" ? shoTask(ctx, level!) : ayaTask(ctx),
  });
}
