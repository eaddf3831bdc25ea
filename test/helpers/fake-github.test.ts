import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Octokit } from "@octokit/rest";
import { FakeGitHub } from "./fake-github.js";

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
let fake: FakeGitHub;
let octokit: Octokit;

beforeEach(async () => {
  fake = await FakeGitHub.start();
  fake.addRepo("acme/board");
  fake.addIssue("acme/board", { title: "Blackboard" });
  octokit = new Octokit({ auth: "test-token", baseUrl: fake.url, log: quiet });
});

afterEach(async () => {
  await fake.close();
});

describe("fake GitHub through @octokit/rest", () => {
  it("creates, reads, edits and lists comments with GitHub's fields", async () => {
    const { data: created, status } = await octokit.rest.issues.createComment({
      owner: "acme",
      repo: "board",
      issue_number: 1,
      body: "hello",
    });
    expect(status).toBe(201);
    expect(created).toMatchObject({
      body: "hello",
      user: { login: "pmagent-bot" },
      html_url: expect.stringContaining("/acme/board/issues/1#issuecomment-"),
    });
    expect(created.node_id).toMatch(/^IC_/);
    expect(created.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);

    const { data: edited } = await octokit.rest.issues.updateComment({
      owner: "acme",
      repo: "board",
      comment_id: created.id,
      body: "edited",
    });
    expect(edited.body).toBe("edited");
    const { data: got } = await octokit.rest.issues.getComment({
      owner: "acme",
      repo: "board",
      comment_id: created.id,
    });
    expect(got.body).toBe("edited");
    const { data: list } = await octokit.rest.issues.listComments({ owner: "acme", repo: "board", issue_number: 1 });
    expect(list.map((c) => c.id)).toEqual([created.id]);
  });

  it("paginates with Link headers (next/last) that octokit.paginate follows", async () => {
    for (let i = 0; i < 205; i++) fake.addComment("acme/board", 1, `c${i}`);
    const first = await octokit.rest.issues.listComments({
      owner: "acme",
      repo: "board",
      issue_number: 1,
      per_page: 100,
    });
    expect(first.data).toHaveLength(100);
    expect(first.headers.link).toContain('rel="next"');
    expect(first.headers.link).toMatch(/page=3>; rel="last"/);
    const all = await octokit.paginate(octokit.rest.issues.listComments, {
      owner: "acme",
      repo: "board",
      issue_number: 1,
      per_page: 100,
    });
    expect(all.map((c) => c.body)).toEqual(Array.from({ length: 205 }, (_, i) => `c${i}`));
    const pages = fake.requests.filter((r) => r.path.endsWith("/comments")).map((r) => r.query.page ?? "1");
    expect(pages).toEqual(["1", "1", "2", "3"]);
  });

  it("answers 401 Bad credentials without a valid token", async () => {
    const anonymous = new Octokit({ baseUrl: fake.url, log: quiet });
    await expect(
      anonymous.rest.issues.listComments({ owner: "acme", repo: "board", issue_number: 1 }),
    ).rejects.toMatchObject({ status: 401, message: expect.stringContaining("Bad credentials") });
    const wrong = new Octokit({ auth: "nope", baseUrl: fake.url, log: quiet });
    await expect(
      wrong.rest.issues.listComments({ owner: "acme", repo: "board", issue_number: 1 }),
    ).rejects.toMatchObject({ status: 401 });
    const bearer = new Octokit({ baseUrl: fake.url, log: quiet });
    await expect(
      bearer.rest.issues.listComments({
        owner: "acme",
        repo: "board",
        issue_number: 1,
        headers: { authorization: "Bearer test-token" },
      }),
    ).resolves.toMatchObject({ status: 200 });
  });

  it("answers 404 Not Found for unknown repositories, issues and comments", async () => {
    await expect(
      octokit.rest.issues.listComments({ owner: "acme", repo: "nope", issue_number: 1 }),
    ).rejects.toMatchObject({ status: 404, message: expect.stringContaining("Not Found") });
    await expect(
      octokit.rest.issues.listComments({ owner: "acme", repo: "board", issue_number: 99 }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      octokit.rest.issues.getComment({ owner: "acme", repo: "board", comment_id: 12345 }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it("refuses the scripted number of requests with a primary or secondary rate limit", async () => {
    fake.rateLimitNext({ requests: 1, kind: "primary", resetInSeconds: 30 });
    const limited = await octokit.rest.issues
      .listComments({ owner: "acme", repo: "board", issue_number: 1 })
      .catch((e: unknown) => e as { status: number; response: { headers: Record<string, string> } });
    expect(limited).toMatchObject({ status: 403, response: { headers: { "x-ratelimit-remaining": "0" } } });
    expect(
      Number((limited as { response: { headers: Record<string, string> } }).response.headers["x-ratelimit-reset"]),
    ).toBeGreaterThan(Date.now() / 1000);
    await expect(
      octokit.rest.issues.listComments({ owner: "acme", repo: "board", issue_number: 1 }),
    ).resolves.toMatchObject({ status: 200 });

    fake.rateLimitNext({ requests: 2, kind: "secondary", retryAfterSeconds: 7 });
    for (let i = 0; i < 2; i++) {
      await expect(
        octokit.rest.issues.listComments({ owner: "acme", repo: "board", issue_number: 1 }),
      ).rejects.toMatchObject({ status: 429, response: { headers: { "retry-after": "7" } } });
    }
    await expect(
      octokit.rest.issues.listComments({ owner: "acme", repo: "board", issue_number: 1 }),
    ).resolves.toMatchObject({ status: 200 });
  });

  it("validates comment bodies with 422", async () => {
    await expect(
      octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
        owner: "acme",
        repo: "board",
        issue_number: 1,
        body: 42 as unknown as string,
      }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it("adds labels, opens and lists pull requests, lists issues with since/state and workflow runs", async () => {
    const { data: labels } = await octokit.rest.issues.addLabels({
      owner: "acme",
      repo: "board",
      issue_number: 1,
      labels: ["blackboard", "lane:doc_update"],
    });
    expect(labels.map((l) => l.name)).toEqual(["blackboard", "lane:doc_update"]);

    const { data: pr } = await octokit.rest.pulls.create({
      owner: "acme",
      repo: "board",
      title: "Apply",
      head: "pmagent/apply-1",
      base: "main",
      body: "b",
    });
    expect(pr).toMatchObject({ number: 2, state: "open", head: { ref: "pmagent/apply-1" }, base: { ref: "main" } });
    await expect(
      octokit.rest.pulls.create({
        owner: "acme",
        repo: "board",
        title: "Again",
        head: "pmagent/apply-1",
        base: "main",
      }),
    ).rejects.toMatchObject({ status: 422, message: expect.stringContaining("A pull request already exists") });
    const { data: pulls } = await octokit.rest.pulls.list({
      owner: "acme",
      repo: "board",
      state: "open",
      head: "acme:pmagent/apply-1",
    });
    expect(pulls.map((p) => p.number)).toEqual([2]);

    fake.mergePull("acme/board", 2, "a".repeat(40));
    const { data: closed } = await octokit.rest.issues.listForRepo({ owner: "acme", repo: "board", state: "closed" });
    expect(closed.map((i) => [i.number, i.pull_request?.merged_at != null])).toEqual([[2, true]]);
    const { data: recent } = await octokit.rest.issues.listForRepo({
      owner: "acme",
      repo: "board",
      state: "all",
      since: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(recent).toEqual([]);

    fake.addWorkflowRun("acme/board", { name: "doc_update", head_branch: "main", conclusion: "failure" });
    const { data: runs } = await octokit.rest.actions.listWorkflowRunsForRepo({
      owner: "acme",
      repo: "board",
      branch: "main",
    });
    expect(runs.total_count).toBe(1);
    expect(runs.workflow_runs[0]).toMatchObject({ name: "doc_update", conclusion: "failure" });
  });
});
