import { RefusedError, UsageError, parseWith } from "../../core/index.js";
import { callGitHub, type Forge, type GitHubClient } from "../../forge/index.js";
import type { Notifier } from "./notify.js";
import { assertCredentialAllowed, type SecretStore } from "./secrets.js";
import type { ActionContext, ActionHandler, ActionOutcome } from "./types.js";

// The parameters' schemas (zod) load with the first action run: a project opened to read its
// actions (Kai, the CLI's lists) does not load zod for them.
const params = () => import("./params.js");

/**
 * The issue or pull request an action targets: `parameters.issue_number`, else the work item id
 * when it names one ("17", "#17", "issue-17", "pr-17").
 */
function targetIssue(action: string, explicit: number | undefined, workItemId: string): number {
  if (explicit !== undefined) return explicit;
  const m = /^(?:#|issue-|issues\/|pr-|pull-|pulls\/)?(\d+)$/i.exec(workItemId.trim());
  if (m) return Number(m[1]);
  throw new UsageError(
    "invalid_parameters",
    `${action}: no issue to act on: the work item "${workItemId}" is not an issue number; give parameters.issue_number`,
  );
}

/** The hidden marker POST_COMMENT appends, so a repeated attempt finds the comment it posted. */
export function commentMarker(key: string): string {
  return `<!-- pmagent:action ${key} -->`;
}

export function openPrHandler(forge: Forge): ActionHandler {
  return {
    // Idempotent by design: pushing the same commit is a no-op and an open PR for the head is reused.
    rerunAfterInterruption: "probe",
    async run(ctx) {
      const p = parseWith(
        (await params()).OpenPrParameters,
        ctx.request.parameters,
        "OPEN_PR parameters",
        "invalid_parameters",
      );
      const pr = await forge.openPullRequest({
        title: p.title,
        body: p.body,
        base: p.base,
        head: p.head,
        workspace: ctx.request.workspace,
      });
      const inputs = { number: pr.number, url: pr.url, head: pr.head, base: pr.base };
      return { stored: { ...inputs, head_sha: pr.head_sha, forge: forge.kind, created: pr.created }, inputs };
    },
  };
}

export interface GitHubTarget {
  client: () => GitHubClient;
  tokenEnv: string;
}

function requireGitHub(github: GitHubTarget | undefined, action: string): GitHubTarget {
  if (!github)
    throw new RefusedError(
      "github_not_configured",
      `${action} needs GitHub: set github.repo in pmagent.config.json (and the token in the variable named by github.token_env)`,
    );
  return github;
}

export function postCommentHandler(github: GitHubTarget | undefined): ActionHandler {
  return {
    rerunAfterInterruption: "probe",
    async run(ctx) {
      const p = parseWith(
        (await params()).PostCommentParameters,
        ctx.request.parameters,
        "POST_COMMENT parameters",
        "invalid_parameters",
      );
      const issue = targetIssue("POST_COMMENT", p.issue_number, ctx.request.workItemId);
      const gh = requireGitHub(github, "POST_COMMENT");
      const { octokit, owner, repo } = gh.client();
      const marker = commentMarker(ctx.idempotencyKey);
      // Every attempt looks for its marker first: a comment posted before a crash is not posted again.
      const comments = await callGitHub(`list the comments of #${issue}`, gh.tokenEnv, () =>
        octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: issue, per_page: 100 }),
      );
      const found = comments.find((c) => c.body?.includes(marker));
      if (found) return { stored: { issue_number: issue, comment_id: found.id, url: found.html_url, created: false } };
      const created = await callGitHub(`comment on #${issue}`, gh.tokenEnv, () =>
        octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body: `${p.body}\n\n${marker}` }),
      );
      return {
        stored: { issue_number: issue, comment_id: created.data.id, url: created.data.html_url, created: true },
      };
    },
  };
}

export function labelIssueHandler(github: GitHubTarget | undefined): ActionHandler {
  return {
    rerunAfterInterruption: "probe",
    async run(ctx) {
      const p = parseWith(
        (await params()).LabelIssueParameters,
        ctx.request.parameters,
        "LABEL_ISSUE parameters",
        "invalid_parameters",
      );
      const issue = targetIssue("LABEL_ISSUE", p.issue_number, ctx.request.workItemId);
      const gh = requireGitHub(github, "LABEL_ISSUE");
      const { octokit, owner, repo } = gh.client();
      // Labels already on the issue (from an attempt cut off by a crash, or a person) are not added again.
      const current = await callGitHub(`read the labels of #${issue}`, gh.tokenEnv, () =>
        octokit.rest.issues.get({ owner, repo, issue_number: issue }),
      );
      const names = current.data.labels.map((l) => (typeof l === "string" ? l : (l.name ?? "")));
      const missing = p.labels.filter((l) => !names.some((n) => n.toLowerCase() === l.toLowerCase()));
      if (missing.length === 0) return { stored: { issue_number: issue, labels: names, added: [] } };
      const res = await callGitHub(`label #${issue}`, gh.tokenEnv, () =>
        octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels: missing }),
      );
      return { stored: { issue_number: issue, labels: res.data.map((l) => l.name), added: missing } };
    },
  };
}

export function notifyUserHandler(notifiers: readonly Notifier[]): ActionHandler {
  return {
    // A notification cannot be looked up afterwards: an interrupted one is sent again under the
    // same key only when every notifier lets its receiver drop a repeat; otherwise its outcome is unknown.
    rerunAfterInterruption: notifiers.every((n) => n.idempotent === true) ? "keyed" : "never",
    async run(ctx) {
      const p = parseWith(
        (await params()).NotifyUserParameters,
        ctx.request.parameters,
        "NOTIFY_USER parameters",
        "invalid_parameters",
      );
      const r = ctx.request;
      for (const notifier of notifiers) {
        await notifier.notify({
          message: p.message,
          level: p.level,
          title: p.title,
          project_id: r.projectId,
          run_id: r.runId,
          role: r.role,
          work_item_id: r.workItemId,
          idempotency_key: ctx.idempotencyKey,
        });
      }
      return { stored: { delivered_to: notifiers.map((n) => n.name) } };
    },
  };
}

export interface CredentialPolicy {
  secrets: SecretStore;
  /** Credentials a role may fetch (config `roles[].credentials`). */
  allowed: (role: string) => readonly string[];
}

export function fetchCredentialHandler(policy: CredentialPolicy): ActionHandler {
  const fetch = async (ctx: ActionContext): Promise<ActionOutcome> => {
    const p = parseWith(
      (await params()).FetchCredentialParameters,
      ctx.request.parameters,
      "FETCH_CREDENTIAL parameters",
      "invalid_parameters",
    );
    assertCredentialAllowed(ctx.request.role, policy.allowed(ctx.request.role), p.name);
    const value = policy.secrets.get(p.name);
    // The stored result says what was handed over, never the value: that goes to resume.json only.
    return { stored: { name: p.name, delivered: true }, inputs: { name: p.name }, secretInputs: { value } };
  };
  return { rerunAfterInterruption: "probe", run: fetch, redeliver: fetch };
}
