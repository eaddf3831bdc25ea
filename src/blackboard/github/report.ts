import { z } from "zod";

const Item = z.object({
  entry_id: z.string(),
  comment_id: z.number().int().positive(),
  project_id: z
    .string()
    .optional()
    .describe("the entry's project, when it is not this project's (one board may hold several projects' entries)"),
});
const count = z.number().int().nonnegative();

/** What `pmagent bb sync` did (its `--format json` output). */
export const SyncReportSchema = z
  .object({
    repo: z.string().describe("OWNER/NAME of the board issue"),
    projects: z
      .array(z.string())
      .describe("the projects synced: this project's first, then those of other entries on the board"),
    issue: z.number().int().positive(),
    comments: count.describe("comments read from the issue (all pages)"),
    imported: z.array(Item).describe("entries created locally from comments"),
    updated_locally: z.array(Item).describe("local entries replaced by the version edited on GitHub"),
    written_back: z.array(Item).describe("comments rewritten in canonical form with the local version"),
    posted: z.array(Item).describe("local entries posted as new comments"),
    unchanged: count.describe("linked entries already the same on both sides"),
    conflicts: z
      .array(Item.extend({ remote_updated_at: z.string(), reason: z.string() }))
      .describe("entries changed on both sides, or otherwise not reconcilable: reported, both sides left alone"),
    bad_comments: z
      .array(
        z.object({
          issue: z.number().int().positive(),
          comment_id: z.number().int().positive(),
          code: z.string(),
          reason: z.string(),
        }),
      )
      .describe("comments with the blackboard marker whose body is not a valid entry"),
    refused: z
      .array(z.object({ entry_id: z.string(), comment_id: z.number().int().positive().optional(), reason: z.string() }))
      .describe(
        "local entries GitHub refused to store (e.g. a comment over its size limit, or deleted during the sync)",
      ),
    rate_limit_waits: count.describe(
      "rate-limit answers waited out and retried (server errors such as a 502 are retried too, not counted here)",
    ),
    not_modified: count.describe(
      "GET answers GitHub gave as 304 Not Modified (an unchanged board costs no rate limit)",
    ),
  })
  .strict();

export type SyncReport = z.output<typeof SyncReportSchema>;
