import type { Page } from "../../store/index.js";
import { z } from "zod";
import { PROPOSAL_STATUSES, type EnvironmentProposal } from "../../lattice/index.js";
import { type LocalPullRequest, type PullComment } from "../../forge/index.js";
import { Cursor, Detail, Id, Limit, PageFields, READ, pageLine, tool, type ToolDef } from "./tool.js";

const PrSchema = z.object({
  number: z.number().int(),
  title: z.string(),
  state: z.enum(["open", "closed", "merged"]),
  head: z.string(),
  base: z.string(),
  head_sha: z.string(),
  created_at: z.string(),
  url: z.string(),
  body: z.string().optional().describe('the description (only with detail: "full")'),
});

export const ProposalDigestSchema = z.object({
  id: z.string(),
  role: z.string(),
  status: z.enum(PROPOSAL_STATUSES),
  adjustment_type: z.string(),
  scope: z.string(),
  confidence: z.number(),
  count: z.number().int().describe("how many times sprites proposed it"),
  failure: z.string().describe("the failure that led to it: phase, exit code and stderr hint"),
  last_seen_at: z.string(),
  decided_by: z.string().nullable(),
  full: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('the whole proposal: details, evidence, runs (only with detail: "full")'),
});

export function proposalDigest(p: EnvironmentProposal, full = false): z.output<typeof ProposalDigestSchema> {
  const f = p.observed_failure;
  return {
    id: p.id,
    role: p.role,
    status: p.status,
    adjustment_type: p.adjustment_type,
    scope: p.scope,
    confidence: p.confidence,
    count: p.count,
    failure: `${f.phase} exited ${f.exit_code}: ${f.stderr_hint}`,
    last_seen_at: p.last_seen_at,
    decided_by: p.decided_by,
    full: full ? (p as unknown as Record<string, unknown>) : undefined,
  };
}

export function proposalLine(p: EnvironmentProposal): string {
  return `${p.id} [${p.status}${p.decided_by ? ` by ${p.decided_by}` : ""}] ${p.role}: ${p.adjustment_type} ${JSON.stringify(p.details)} (seen ${p.count}×, confidence ${p.confidence}; after ${p.observed_failure.phase} exited ${p.observed_failure.exit_code})`;
}

const decide = (verb: "accept" | "reject") =>
  tool({
    name: `env_proposal_${verb}`,
    title: `${verb === "accept" ? "Accept" : "Reject"} an environment proposal`,
    description:
      verb === "accept"
        ? "Accept a pending environment proposal as yourself: its change is applied now (a runtime, package or dependency manager installed for the role's runs; a failed install is reported and not applied) and later runs of its role (of every role, for a global_candidate) get it. Only a human (the config's humans) may; a decided proposal is refused (proposal_decided)."
        : "Reject a pending environment proposal as yourself: its role's environment stays as it is. Only a human (the config's humans) may; a decided proposal is refused (proposal_decided).",
    input: z.object({ id: Id("environment proposal", "envp_3f2a9c0d1e4b") }).strict(),
    output: z.object({ proposal: ProposalDigestSchema }),
    hints: { readOnly: false, destructive: false, idempotent: false },
    async run(a, env) {
      // The decider is the authenticated actor; the API's rule (humans only) applies unchanged.
      const p = (await env.route(`POST /v1/env/proposals/:id/${verb}`, {
        params: { id: a.id },
      })) as EnvironmentProposal & { change?: { id: string; status: string; reason: string | null } };
      const change = p.change
        ? `; change ${p.change.id} ${p.change.status}${p.change.reason ? `: ${p.change.reason}` : ""}`
        : "";
      return { structured: { proposal: proposalDigest(p) }, text: `${proposalLine(p)}${change}` };
    },
  });

const decidePr = (decision: "merge" | "close") =>
  tool({
    name: `prs_${decision}`,
    title: `${decision === "merge" ? "Merge" : "Close"} a pull request`,
    description:
      decision === "merge"
        ? "Merge an open pull request of the local forge into its base branch in the forge's repository, as yourself (fast-forward, else a merge commit naming you). Only a human (the config's humans) may; a pull request not open is refused (pull_request_not_open), a conflict merges nothing (merge_conflict, with the files)."
        : "Close an open pull request of the local forge without merging it, as yourself. Only a human (the config's humans) may; a pull request not open is refused (pull_request_not_open).",
    input: z.object({ number: z.number().int().min(1).describe("the pull request number, e.g. 3") }).strict(),
    output: z.object({ pr: PrSchema, sha: z.string().optional().describe("merge: the base branch's new head") }),
    hints: { readOnly: false, destructive: decision === "close", idempotent: false },
    async run(a, env) {
      // The decider is the authenticated actor; the API's rule (humans only) applies unchanged.
      const d = (await env.route(`POST /v1/prs/:number/${decision}`, { params: { number: a.number } })) as {
        pull: LocalPullRequest;
        sha?: string;
      };
      const p = d.pull;
      const pr = {
        number: p.number,
        title: p.title,
        state: p.state,
        head: p.head,
        base: p.base,
        head_sha: p.head_sha,
        created_at: p.created_at,
        url: p.url,
      };
      return {
        structured: { pr, sha: d.sha },
        text:
          decision === "merge"
            ? `merged #${p.number} (${p.head} → ${p.base}); ${p.base} is now ${d.sha ?? "?"}`
            : `closed #${p.number} (${p.head} → ${p.base})`,
      };
    },
  });

export const FORGE_TOOLS: ToolDef[] = [
  tool({
    name: "prs_list",
    title: "List pull requests",
    description:
      'Pull requests of the project\'s local forge, newest first: number, title, state, head → base. Filter by state; page with limit and cursor; detail "full" adds each description.',
    input: z
      .object({
        state: z.enum(["open", "closed", "merged"]).optional().describe("only pull requests in this state"),
        limit: Limit(20, 100, "pull requests"),
        cursor: Cursor,
        detail: Detail,
      })
      .strict(),
    output: z.object({ prs: z.array(PrSchema), ...PageFields }),
    hints: READ,
    async run(a, env) {
      const p = (await env.route("GET /v1/prs", {
        query: { state: a.state, order: "newest", limit: a.limit, cursor: a.cursor },
      })) as Page<LocalPullRequest>;
      const prs = p.items.map((pr) => ({
        number: pr.number,
        title: pr.title,
        state: pr.state,
        head: pr.head,
        base: pr.base,
        head_sha: pr.head_sha,
        created_at: pr.created_at,
        url: pr.url,
        body: a.detail === "full" ? pr.body : undefined,
      }));
      const lines = p.items.map(
        (pr) =>
          `#${pr.number} [${pr.state}] ${pr.title} (${pr.head} → ${pr.base}, ${pr.head_sha.slice(0, 12)}, ${pr.created_at})${a.detail === "full" && pr.body ? `\n  ${pr.body}` : ""}`,
      );
      return {
        structured: { prs, next_cursor: p.next },
        text: [...lines, pageLine(p.items.length, p.next, "pull requests")].join("\n"),
      };
    },
  }),
  tool({
    name: "prs_comment",
    title: "Comment on a pull request",
    description:
      "Add a review comment to a local pull request as yourself: on the change, or with path (and line) on one of its files.",
    input: z
      .object({
        number: z.number().int().min(1).describe("pull request number"),
        body: z.string().min(1).describe("Markdown"),
        path: z.string().min(1).optional().describe("a file of the change"),
        line: z.number().int().min(1).optional().describe("its line, new version"),
      })
      .strict(),
    output: z.object({ id: z.string(), comments: z.number().int() }),
    hints: { readOnly: false, destructive: false, idempotent: false },
    async run(a, env) {
      // The author is the authenticated actor; the API validates the comment.
      const c = (await env.route("POST /v1/prs/:number/comments", {
        params: { number: a.number },
        body: { body: a.body, path: a.path ?? null, line: a.line ?? null },
      })) as PullComment;
      const { items } = (await env.route("GET /v1/prs/:number/comments", { params: { number: a.number } })) as {
        items: PullComment[];
      };
      return {
        structured: { id: c.id, comments: items.length },
        text: `${c.author}${c.path ? ` on ${c.path}${c.line ? `:${c.line}` : ""}` : ""}: ${c.body} (#${a.number} has ${items.length} comment${items.length === 1 ? "" : "s"})`,
      };
    },
  }),
  tool({
    name: "env_proposals_list",
    title: "List environment proposals",
    description:
      'Environment adjustments sprites proposed after a failure (e.g. a package to preinstall), most recently seen first. Pending ones wait for a human: env_proposal_accept or env_proposal_reject. Filter by status or role; detail "full" adds details and evidence.',
    input: z
      .object({
        status: z
          .enum(PROPOSAL_STATUSES)
          .optional()
          .describe("only proposals in this status: pending, accepted or rejected"),
        role: z.string().min(1).optional().describe("only proposals for this role"),
        limit: Limit(20, 100, "proposals"),
        cursor: Cursor,
        detail: Detail,
      })
      .strict(),
    output: z.object({ proposals: z.array(ProposalDigestSchema), ...PageFields }),
    hints: READ,
    async run(a, env) {
      const p = (await env.route("GET /v1/env/proposals", {
        query: { status: a.status, role: a.role, order: "newest", limit: a.limit, cursor: a.cursor },
      })) as Page<EnvironmentProposal>;
      return {
        structured: { proposals: p.items.map((x) => proposalDigest(x, a.detail === "full")), next_cursor: p.next },
        text: [...p.items.map(proposalLine), pageLine(p.items.length, p.next, "proposals")].join("\n"),
      };
    },
  }),
  decide("accept"),
  decide("reject"),
  decidePr("merge"),
  decidePr("close"),
];
