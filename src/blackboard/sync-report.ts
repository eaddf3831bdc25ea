import { z } from "zod";

const Item = z.object({ entry_id: z.string(), comment_id: z.number().int() });

/** What `pmagent bb sync` did (its `--format json` output). */
export const SyncReportSchema = z.object({
  repo: z.string(),
  issue: z.number().int(),
  /** Comments read from the issue (all pages). */
  comments: z.number().int(),
  /** Entries created locally from comments. */
  imported: z.array(Item),
  /** Local entries replaced by the version edited on GitHub. */
  updated_locally: z.array(Item),
  /** Comments rewritten (canonical form) with the local version. */
  written_back: z.array(Item),
  /** Local entries posted as new comments. */
  posted: z.array(Item),
  /** Linked entries already the same on both sides. */
  unchanged: z.number().int(),
  /** Entries changed on both sides (or otherwise not reconcilable): reported, left alone. */
  conflicts: z.array(Item.extend({ remote_updated_at: z.string(), reason: z.string() })),
  /** Comments with the blackboard marker whose body is not a valid entry. */
  bad_comments: z.array(z.object({ issue: z.number().int(), comment_id: z.number().int(), code: z.string(), reason: z.string() })),
  /** Valid entries of another project. */
  skipped: z.array(Item.extend({ reason: z.string() })),
  /** Rate-limit answers waited out (and retried). */
  rate_limit_waits: z.number().int(),
});

export type SyncReport = z.output<typeof SyncReportSchema>;
