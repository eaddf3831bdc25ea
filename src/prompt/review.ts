import { parseWith } from "../core/index.js";
import { ReviewerOutputSchema } from "./presets.js";
import type { ReviewLevel } from "./roles.js";

export interface ReviewOutcome {
  /** The level the review ran at (the configured one: the model cannot lower its own gate). */
  level: ReviewLevel;
  decision: "approve" | "revise" | "block";
  /** How the reviewer's step ends: `failure` stops the lane before the next step. */
  result: "success" | "failure";
  /** The lane goes on, and the reviewed work is due for a revision. */
  revision_requested: boolean;
  reason: string;
}

// Loose: a review under an explicit schema may carry more fields than these two.
const DecisionSchema = ReviewerOutputSchema.pick({ decision: true, summary: true }).loose();

/**
 * Enforce a reviewer level on a review: `feedback` never blocks, `soft_gate` asks for a revision
 * and lets the lane go on, `hard_gate` fails the step when the decision is `block`.
 */
export function reviewOutcome(level: ReviewLevel, answer: unknown): ReviewOutcome {
  const { decision, summary } = parseWith(DecisionSchema, answer, "reviewer answer", "invalid_review");
  const base = { level, decision, reason: summary };
  if (level === "feedback") return { ...base, result: "success", revision_requested: false };
  if (level === "hard_gate" && decision === "block") return { ...base, result: "failure", revision_requested: false };
  return { ...base, result: "success", revision_requested: decision !== "approve" };
}
