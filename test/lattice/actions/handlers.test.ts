import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ConfigInput } from "../../../src/config/index.js";
import { SecretStore, commentMarker, type ActionRequest, type ResumeFn } from "../../../src/lattice/index.js";
import { LocalForge } from "../../../src/forge/index.js";
import { projectActionExecutor } from "../../../src/app/index.js";
import { FakeGitHub } from "../../helpers/fake-github.js";
import { openSqliteTestStore, type TestStore } from "../../helpers/stores.js";
import { actionRequest, makeProject, makeWorkspace, sh, type TestProject } from "../fixtures.js";

const TOKEN = "test-token";

interface Hook {
  server: Server;
  url: string;
  received: Array<{ headers: IncomingHttpHeaders; body: Record<string, unknown> }>;
  /** Status codes to answer with, in order (then 204). */
  answers: number[];
}

async function startHook(): Promise<Hook> {
  const hook: Hook = { server: undefined as unknown as Server, url: "", received: [], answers: [] };
  hook.server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d: Buffer) => (raw += d.toString()));
    req.on("end", () => {
      hook.received.push({ headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
      res.writeHead(hook.answers.shift() ?? 204).end();
    });
  });
  await new Promise<void>((r) => hook.server.listen(0, "127.0.0.1", () => r()));
  hook.url = `http://127.0.0.1:${(hook.server.address() as AddressInfo).port}/hook`;
  return hook;
}

describe("action handlers against real git, a local GitHub and a local webhook", () => {
  let gh: FakeGitHub;
  let hook: Hook;
  let t: TestStore;
  let p: TestProject;
  let resumed: Array<{ runId: string; payload: Parameters<ResumeFn>[1] }>;
  let consoleLines: string[];

  beforeAll(async () => {
    gh = await FakeGitHub.start({ tokens: { [TOKEN]: "pmagent-bot" } });
    hook = await startHook();
  });
  afterAll(async () => {
    await gh.close();
    await new Promise<void>((r) => hook.server.close(() => r()));
  });
  beforeEach(async () => {
    t = await openSqliteTestStore();
    resumed = [];
    consoleLines = [];
    hook.received.length = 0;
    hook.answers.length = 0;
  });
  afterEach(async () => {
    await t.cleanup();
    p?.cleanup();
  });

  const executorFor = (extra: Partial<ConfigInput>, env: NodeJS.ProcessEnv = {}) => {
    p = makeProject(extra);
    return projectActionExecutor({
      project: p.project,
      store: t.store,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      resume: async (runId, payload) => void resumed.push({ runId, payload }),
      consoleWrite: (line) => void consoleLines.push(line),
      retry: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 },
    });
  };

  describe("OPEN_PR through the local forge", () => {
    it("pushes the head from the workspace to the bare repository and records the pull request", async () => {
      const ex = executorFor({});
      const ws = makeWorkspace(p.project.root, "ws1", "sprite/fix-cache");
      const params = { title: "Fix cache", body: "Resolves #1", base: "main", head: "sprite/fix-cache" };
      const record = await ex.submit(
        actionRequest({ action: "OPEN_PR", blocking: true, workspace: ws.path, parameters: params, runId: "run-pr" }),
      );
      expect(record.state).toBe("succeeded");
      const inputs = { number: 1, url: "pmagent-forge://demo/pulls/1", head: "sprite/fix-cache", base: "main" };
      expect(resumed).toEqual([
        {
          runId: "run-pr",
          payload: {
            inputs,
            context: {
              action: {
                action: "OPEN_PR",
                idempotency_key: record.idempotency_key,
                state: "succeeded",
                result: inputs,
              },
            },
          },
        },
      ]);
      const bare = join(p.project.root, ".pmagent/forge.git");
      expect(sh(bare, "rev-parse", "refs/heads/sprite/fix-cache")).toBe(ws.sha);
      expect(sh(bare, "rev-parse", "refs/heads/main")).toBe(sh(p.project.root, "rev-parse", "main"));
      const forge = new LocalForge({
        store: t.store,
        projectId: "demo",
        root: p.project.root,
        bareRepo: ".pmagent/forge.git",
      });
      expect(await forge.list()).toMatchObject([
        {
          number: 1,
          head: "sprite/fix-cache",
          base: "main",
          title: "Fix cache",
          body: "Resolves #1",
          head_sha: ws.sha,
          state: "open",
        },
      ]);

      // Another OPEN_PR for the same head (a new event) finds the open pull request instead of opening a second one.
      const again = await ex.submit(actionRequest({ action: "OPEN_PR", workspace: ws.path, parameters: params }));
      expect(again.result).toMatchObject({ number: 1, created: false });
      expect(await forge.list()).toHaveLength(1);
      const other = makeWorkspace(p.project.root, "ws2", "sprite/other");
      const second = await ex.submit(
        actionRequest({ action: "OPEN_PR", workspace: other.path, parameters: { ...params, head: "sprite/other" } }),
      );
      expect(second.result).toMatchObject({ number: 2, created: true });
    });

    it.each([
      [
        { title: "t", base: "main", head: "sprite/none" },
        "branch_not_found",
        'OPEN_PR: branch "sprite/none" does not exist in the run\'s workspace',
      ],
      [
        { title: "t", base: "main", head: "bad..name" },
        "invalid_branch",
        'OPEN_PR: parameters.head "bad..name" is not a valid branch name',
      ],
      [
        { title: "t", base: "main", head: "--upload-pack=x" },
        "invalid_branch",
        'OPEN_PR: parameters.head "--upload-pack=x" is not a valid branch name',
      ],
      [{ title: "t", base: "main", head: "main" }, "invalid_parameters", 'OPEN_PR: head and base are both "main"'],
      [
        { title: "t", base: "release", head: "sprite/x" },
        "base_not_found",
        'OPEN_PR: base branch "release" exists neither in the forge',
      ],
      [{ base: "main", head: "sprite/x" }, "invalid_parameters", "OPEN_PR parameters is invalid:\n  $.title:"],
    ])("refuses %j with a clear error", async (params, code, message) => {
      const ex = executorFor({});
      const ws = makeWorkspace(p.project.root, "ws", "sprite/x");
      const record = await ex.submit(actionRequest({ action: "OPEN_PR", workspace: ws.path, parameters: params }));
      expect(record.state).toBe("failed");
      expect(record.error!.code).toBe(code);
      expect(record.error!.message).toContain(message);
      expect(record.attempts).toBe(1);
    });
  });

  describe("OPEN_PR through GitHub", () => {
    it("pushes to the GitHub git remote with the supervisor's token and opens the pull request via the REST API", async () => {
      gh.addRepo("acme/site");
      const remote = join(makeProject().dir, "remote.git");
      sh(join(remote, ".."), "init", "--bare", "--quiet", remote);
      const ex = executorFor(
        { github: { repo: "acme/site", api_url: gh.url, token_env: "GH_TOKEN" } },
        { GH_TOKEN: TOKEN, PMAGENT_GITHUB_GIT_URL: remote },
      );
      const ws = makeWorkspace(p.project.root, "ws", "sprite/gh");
      const params = { title: "Docs", body: "b", base: "main", head: "sprite/gh" };
      const record = await ex.submit(
        actionRequest({ action: "OPEN_PR", blocking: true, workspace: ws.path, parameters: params }),
      );
      expect(record.state).toBe("succeeded");
      const pulls = gh.pulls("acme/site");
      expect(pulls).toHaveLength(1);
      expect(pulls[0]).toMatchObject({ title: "Docs", body: "b", head: { ref: "sprite/gh" }, base: { ref: "main" } });
      expect(resumed[0]!.payload.inputs).toEqual({
        number: pulls[0]!.number,
        url: pulls[0]!.html_url,
        head: "sprite/gh",
        base: "main",
      });
      expect(sh(remote, "rev-parse", "refs/heads/sprite/gh")).toBe(ws.sha);
      const auth = gh.requests.filter((r) => r.path.endsWith("/pulls")).map((r) => r.headers.authorization);
      expect(auth.every((a) => a === `token ${TOKEN}`)).toBe(true);
      // A repeated request finds the open pull request.
      const again = await ex.submit(actionRequest({ action: "OPEN_PR", workspace: ws.path, parameters: params }));
      expect(again.result).toMatchObject({ number: pulls[0]!.number, created: false });
      expect(gh.pulls("acme/site")).toHaveLength(1);
    });

    it("fails clearly without a token, and with a token GitHub refuses", async () => {
      gh.addRepo("acme/site");
      let ex = executorFor({ github: { repo: "acme/site", api_url: gh.url, token_env: "GH_TOKEN" } });
      const ws = makeWorkspace(p.project.root, "ws", "sprite/t");
      const params = { title: "x", base: "main", head: "sprite/t" };
      let record = await ex.submit(actionRequest({ action: "OPEN_PR", workspace: ws.path, parameters: params }));
      expect(record.error).toEqual({
        code: "github_token_missing",
        message: "no GitHub token: set the environment variable GH_TOKEN (config github.token_env) for the supervisor",
      });
      const remote = join(p.dir, "remote.git");
      sh(p.dir, "init", "--bare", "--quiet", remote);
      const wrong = "wrong-token-value";
      ex = executorFor(
        { github: { repo: "acme/site", api_url: gh.url, token_env: "GH_TOKEN" } },
        { GH_TOKEN: wrong, PMAGENT_GITHUB_GIT_URL: remote },
      );
      const ws2 = makeWorkspace(p.project.root, "ws", "sprite/t");
      record = await ex.submit(actionRequest({ action: "OPEN_PR", workspace: ws2.path, parameters: params }));
      expect(record.error!.code).toBe("github_unauthorized");
      expect(record.error!.message).toContain("GitHub refused the token in GH_TOKEN (401 Bad credentials)");
      expect(JSON.stringify(record)).not.toContain(wrong);
    });
  });

  describe("POST_COMMENT and LABEL_ISSUE", () => {
    const config = () => ({ github: { repo: "acme/board", api_url: gh.url, token_env: "GH_TOKEN" } });

    it("posts a comment tagged with the idempotency key and never posts it twice", async () => {
      gh.addRepo("acme/board");
      const issue = gh.addIssue("acme/board", { title: "work" });
      const ex = executorFor(config(), { GH_TOKEN: TOKEN });
      const req = actionRequest({
        action: "POST_COMMENT",
        workItemId: `issue-${issue.number}`,
        parameters: { body: "Tests pass." },
      });
      const record = await ex.submit(req);
      const comments = gh.comments("acme/board", issue.number);
      expect(comments).toHaveLength(1);
      expect(comments[0]!.body).toBe(`Tests pass.\n\n${commentMarker(record.idempotency_key)}`);
      expect(record.result).toMatchObject({ issue_number: issue.number, comment_id: comments[0]!.id, created: true });
      // A crash after GitHub stored the comment but before the row said so: the rerun finds it.
      await t.store.run("UPDATE lattice_actions SET state = 'pending', result_json = NULL");
      const again = await ex.submit(req);
      expect(again.result).toMatchObject({ comment_id: comments[0]!.id, created: false });
      expect(gh.comments("acme/board", issue.number)).toHaveLength(1);
    });

    it("retries through GitHub rate limits", async () => {
      gh.addRepo("acme/board");
      const issue = gh.addIssue("acme/board");
      const ex = executorFor(config(), { GH_TOKEN: TOKEN });
      gh.rateLimitNext({ requests: 2, kind: "secondary", retryAfterSeconds: 0 });
      const record = await ex.submit(
        actionRequest({ action: "POST_COMMENT", parameters: { body: "hi", issue_number: issue.number } }),
      );
      expect(record).toMatchObject({ state: "succeeded", attempts: 3 });
      expect(gh.comments("acme/board", issue.number)).toHaveLength(1);
    });

    it("labels an issue", async () => {
      gh.addRepo("acme/board");
      const issue = gh.addIssue("acme/board", { labels: ["bug"] });
      const ex = executorFor(config(), { GH_TOKEN: TOKEN });
      const record = await ex.submit(
        actionRequest({
          action: "LABEL_ISSUE",
          workItemId: String(issue.number),
          parameters: { labels: ["needs-review", "docs"] },
        }),
      );
      expect(record.result).toEqual({
        issue_number: issue.number,
        labels: ["bug", "needs-review", "docs"],
        added: ["needs-review", "docs"],
      });
      expect(gh.issue("acme/board", issue.number)!.labels.map((l) => l.name)).toEqual(["bug", "needs-review", "docs"]);
      // Labels already there are not added again (a rerun after a crash sends no second request).
      const posts = () =>
        gh.requests.filter((r) => r.method === "POST" && r.path.endsWith(`/issues/${issue.number}/labels`)).length;
      const before = posts();
      const again = await ex.submit(
        actionRequest({ action: "LABEL_ISSUE", workItemId: String(issue.number), parameters: { labels: ["DOCS"] } }),
      );
      expect(again.result).toEqual({ issue_number: issue.number, labels: ["bug", "needs-review", "docs"], added: [] });
      expect(posts()).toBe(before);
    });

    it.each([
      [
        "POST_COMMENT",
        { body: "x", issue_number: 999 },
        "issue-1",
        "github_not_found",
        "GitHub answered 404 Not Found when trying to list the comments of #999",
      ],
      [
        "POST_COMMENT",
        { body: "x" },
        "task-abc",
        "invalid_parameters",
        'POST_COMMENT: no issue to act on: the work item "task-abc" is not an issue number; give parameters.issue_number',
      ],
      [
        "POST_COMMENT",
        { body: "" },
        "issue-1",
        "invalid_parameters",
        "POST_COMMENT parameters is invalid:\n  $.body: must be a non-empty string",
      ],
      [
        "LABEL_ISSUE",
        { labels: [] },
        "issue-1",
        "invalid_parameters",
        "LABEL_ISSUE parameters is invalid:\n  $.labels: must name at least one label",
      ],
      [
        "LABEL_ISSUE",
        { labels: ["x"], issue_number: -3 },
        "issue-1",
        "invalid_parameters",
        "$.issue_number: must be a positive issue or pull request number",
      ],
    ])("%s %j on %s fails with %s", async (action, parameters, workItemId, code, message) => {
      gh.addRepo("acme/board");
      const ex = executorFor(config(), { GH_TOKEN: TOKEN });
      const record = await ex.submit(actionRequest({ action, parameters, workItemId }));
      expect(record).toMatchObject({ state: "failed", attempts: 1 });
      expect(record.error!.code).toBe(code);
      expect(record.error!.message).toContain(message);
    });

    it("says GitHub is not configured", async () => {
      const ex = executorFor({});
      const record = await ex.submit(actionRequest({ action: "LABEL_ISSUE", parameters: { labels: ["x"] } }));
      expect(record.error).toEqual({
        code: "github_not_configured",
        message:
          "LABEL_ISSUE needs GitHub: set github.repo in pmagent.config.json (and the token in the variable named by github.token_env)",
      });
    });
  });

  describe("NOTIFY_USER", () => {
    it("posts JSON to the webhook and writes the console", async () => {
      const ex = executorFor({ notify: { webhook_url: hook.url } });
      const record = await ex.submit(
        actionRequest({
          action: "NOTIFY_USER",
          runId: "run-n",
          parameters: { message: "Review needed", level: "warning", title: "Tsugu" },
        }),
      );
      expect(record.result).toEqual({ delivered_to: ["webhook", "console"] });
      expect(hook.received).toHaveLength(1);
      expect(hook.received[0]!.headers["idempotency-key"]).toBe(record.idempotency_key);
      expect(hook.received[0]!.body).toEqual({
        message: "Review needed",
        level: "warning",
        title: "Tsugu",
        project_id: "demo",
        run_id: "run-n",
        role: "Tsugu",
        work_item_id: "issue-1",
        idempotency_key: record.idempotency_key,
      });
      expect(consoleLines).toEqual(["[pmagent notify] WARNING Tsugu: Review needed (Tsugu run-n issue-1)\n"]);
    });

    it("retries a webhook answering 503 and gives up on 400 with a message", async () => {
      const ex = executorFor({ notify: { webhook_url: hook.url } });
      hook.answers.push(503);
      expect(await ex.submit(actionRequest({ action: "NOTIFY_USER", parameters: { message: "a" } }))).toMatchObject({
        state: "succeeded",
        attempts: 2,
      });
      hook.answers.push(400);
      const failed = await ex.submit(actionRequest({ action: "NOTIFY_USER", parameters: { message: "b" } }));
      expect(failed.error).toEqual({
        code: "webhook_refused",
        message: `notification webhook ${new URL(hook.url).origin} refused the notification with 400: check notify.webhook_url`,
      });
    });

    it("refuses a notification without a message", async () => {
      const ex = executorFor({});
      const record = await ex.submit(actionRequest({ action: "NOTIFY_USER", parameters: { text: "x" } }));
      expect(record.error!.message).toBe(
        "NOTIFY_USER parameters is invalid:\n  $.message: Invalid input: expected string, received undefined",
      );
    });
  });

  describe("FETCH_CREDENTIAL", () => {
    const SECRET = "s3cr3t-deploy-value-0123456789";

    it("hands an allowed secret to the sprite's resume only, from the environment or the secrets file", async () => {
      const ex = executorFor({ secrets: { file: "secrets.json" } }, { DEPLOY_TOKEN: SECRET });
      const req: ActionRequest = actionRequest({
        action: "FETCH_CREDENTIAL",
        blocking: true,
        role: "Tsugu",
        parameters: { name: "DEPLOY_TOKEN" },
      });
      const record = await ex.submit(req);
      expect(record.result).toEqual({ name: "DEPLOY_TOKEN", delivered: true });
      expect(resumed[0]!.payload).toMatchObject({ inputs: { name: "DEPLOY_TOKEN" }, secretInputs: { value: SECRET } });
      expect(JSON.stringify(await ex.actions.list())).not.toContain(SECRET);
    });

    it("reads the secrets file when the environment lacks the name", async () => {
      const ex = executorFor({ secrets: { file: "secrets.json" } });
      writeFileSync(join(p.project.root, "secrets.json"), JSON.stringify({ DEPLOY_TOKEN: SECRET }));
      await ex.submit(
        actionRequest({ action: "FETCH_CREDENTIAL", blocking: true, parameters: { name: "DEPLOY_TOKEN" } }),
      );
      expect(resumed[0]!.payload.secretInputs).toEqual({ value: SECRET });
    });

    it.each([
      [
        "Aya",
        "DEPLOY_TOKEN",
        "credential_not_allowed",
        'role "Aya" may not fetch credential "DEPLOY_TOKEN" (it may fetch OPENAI_API_KEY); add it to that role\'s "credentials" in pmagent.config.json to allow it',
      ],
      [
        "Tsugu",
        "OTHER",
        "credential_not_allowed",
        'role "Tsugu" may not fetch credential "OTHER" (it may fetch DEPLOY_TOKEN); add it to that role\'s "credentials" in pmagent.config.json to allow it',
      ],
    ])("refuses role %s the credential %s and resumes it with the error", async (role, name, code, message) => {
      const ex = executorFor({}, { DEPLOY_TOKEN: SECRET, OTHER: SECRET });
      const record = await ex.submit(
        actionRequest({ action: "FETCH_CREDENTIAL", blocking: true, role, parameters: { name } }),
      );
      expect(record.error).toEqual({ code, message });
      expect(resumed[0]!.payload).toMatchObject({
        inputs: {},
        failure: { action: "FETCH_CREDENTIAL", message: `${message} [${code}]` },
      });
      expect(JSON.stringify(resumed)).not.toContain(SECRET);
    });

    it("says where it looked for a missing secret, and refuses a bad secrets file without quoting it", async () => {
      const ex = executorFor({ secrets: { file: "secrets.json" } });
      let record = await ex.submit(actionRequest({ action: "FETCH_CREDENTIAL", parameters: { name: "DEPLOY_TOKEN" } }));
      expect(record.error).toEqual({
        code: "credential_not_found",
        message: `credential "DEPLOY_TOKEN" is not set in the environment or ${join(p.project.root, "secrets.json")}`,
      });
      writeFileSync(join(p.project.root, "secrets.json"), `{"DEPLOY_TOKEN": "${SECRET}",`);
      record = await ex.submit(actionRequest({ action: "FETCH_CREDENTIAL", parameters: { name: "DEPLOY_TOKEN" } }));
      expect(record.error!.message).toBe(
        `secrets file ${join(p.project.root, "secrets.json")} is not valid JSON: expected an object of name → string value`,
      );
      expect(() => new SecretStore({ root: p.project.root, env: {} }).get("../etc")).toThrow(
        'credential name "../etc" is invalid: expected letters, digits',
      );
    });

    it("refuses a secrets file outside the project", () => {
      expect(() => executorFor({ secrets: { file: "../outside.json" } })).toThrow(
        /secrets.file "..\/outside.json" is outside/,
      );
      expect(existsSync(join(p.project.root, "..", "outside.json"))).toBe(false);
    });
  });
});
