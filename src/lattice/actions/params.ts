import { z } from "zod";

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
