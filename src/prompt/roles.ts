import { UsageError } from "../core/index.js";

/** The four agent roles of the prompt contract; each has its own developer template. */
export const AGENT_ROLES = ["orchestrator", "reviewer", "executor", "searcher"] as const;
export type AgentRole = (typeof AGENT_ROLES)[number];

/** Reviewer levels: how much weight a review has on the lane. */
export const REVIEW_LEVELS = ["feedback", "soft_gate", "hard_gate"] as const;
export type ReviewLevel = (typeof REVIEW_LEVELS)[number];

/** A review blocks by default: the doc_update lane relies on Sho refusing a truncated apply. */
export const DEFAULT_REVIEW_LEVEL: ReviewLevel = "hard_gate";

export function isAgentRole(value: string): value is AgentRole {
  return (AGENT_ROLES as readonly string[]).includes(value);
}

export function parseAgentRole(value: string): AgentRole {
  if (!isAgentRole(value))
    throw new UsageError("unknown_role", `unknown role "${value}": expected one of ${AGENT_ROLES.join(", ")}`);
  return value;
}

export function parseReviewLevel(value: string): ReviewLevel {
  if (!(REVIEW_LEVELS as readonly string[]).includes(value)) {
    throw new UsageError(
      "unknown_review_level",
      `unknown review level "${value}": expected one of ${REVIEW_LEVELS.join(", ")}`,
    );
  }
  return value as ReviewLevel;
}
