import { z } from "zod";
import { UsageError } from "../../core/index.js";

const text = z.string().min(1, "must be a non-empty string");
const issueNumber = z.int().positive("must be a positive issue or pull request number");

/** Parameters of each known action (extra fields are ignored, as the protocol's payloads allow). */
export const OpenPrParameters = z.looseObject({ title: text, body: z.string().default(""), base: text, head: text });
export const PostCommentParameters = z.looseObject({ body: text, issue_number: issueNumber.optional() });
export const LabelIssueParameters = z.looseObject({
  labels: z.array(text).min(1, "must name at least one label"),
  issue_number: issueNumber.optional(),
});
export const NotifyUserParameters = z.looseObject({
  message: text,
  level: z.string().min(1).default("info"),
  title: z.string().optional(),
});
export const FetchCredentialParameters = z.looseObject({ name: text });

/**
 * The issue or pull request an action targets: `parameters.issue_number`, else the work item id
 * when it names one ("17", "#17", "issue-17", "pr-17").
 */
export function targetIssue(action: string, explicit: number | undefined, workItemId: string): number {
  if (explicit !== undefined) return explicit;
  const m = /^(?:#|issue-|issues\/|pr-|pull-|pulls\/)?(\d+)$/i.exec(workItemId.trim());
  if (m) return Number(m[1]);
  throw new UsageError(
    "invalid_parameters",
    `${action}: no issue to act on: the work item "${workItemId}" is not an issue number; give parameters.issue_number`,
  );
}
