import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { ActionStore, commentMarker, type ActionRequest } from "../../../src/lattice/index.js";
import { LocalForge } from "../../../src/forge/index.js";
import { openStore, type Store } from "../../../src/store/index.js";
import { migrations } from "../../../src/app/index.js";
import { FakeGitHub } from "../../helpers/fake-github.js";
import { REPO_ROOT } from "../../helpers/proc.js";
import { makeProject, makeWorkspace, type TestProject } from "../fixtures.js";

// The 50-trial run through the real supervisor process is actions-crash.test.ts; this one drives the
// executor process directly (and searches its logs for the secret) in fewer trials.
const TRIALS = Number(process.env.KILL_TRIALS ?? 10);
const TOKEN = "kill-test-token";
const SECRET = "kill-test-secret-value-7f3a9c1e";
const FIXTURE = join(REPO_ROOT, "test/lattice/fixtures/action-supervisor.mjs");

/** Run the supervisor fixture; with `killAfterMs`, SIGKILL it that long after it is READY. */
function supervise(
  args: string[],
  env: NodeJS.ProcessEnv,
  killAfterMs?: number,
): Promise<{ killed: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (killAfterMs !== undefined && stdout.includes("READY\n")) setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    // A supervisor that does not finish is a failure of the test, reported with its output.
    const stuck = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(stuck);
      if (signal === "SIGKILL" && killAfterMs === undefined)
        return reject(new Error(`supervisor did not finish within 60 s: ${stdout} ${stderr.slice(-3000)}`));
      if (signal === "SIGKILL" || code === 0) resolve({ killed: signal === "SIGKILL", stdout, stderr });
      else reject(new Error(`supervisor exited with ${code}: ${stderr}`));
    });
  });
}

describe("actions across supervisor crashes (SIGKILL at random points, then restart)", () => {
  let gh: FakeGitHub;
  let hook: Server;
  const hookKeys: string[] = [];
  let p: TestProject;
  let store: Store;

  beforeAll(async () => {
    gh = await FakeGitHub.start({ tokens: { [TOKEN]: "pmagent-bot" } });
    gh.addRepo("acme/site");
    hook = createServer((req, res) => {
      req.resume();
      // A slow receiver widens the window in which the supervisor dies mid-notification.
      req.on("end", () =>
        setTimeout(
          () => {
            hookKeys.push(String(req.headers["idempotency-key"]));
            res.writeHead(204).end();
          },
          Math.floor(Math.random() * 40),
        ),
      );
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    p = makeProject({ notify: { webhook_url: hookUrl }, secrets: { file: "secrets.json" } });
    store = await openStore({ migrations, root: p.project.root, storage: p.project.config.storage });
  });
  afterAll(async () => {
    await store?.close();
    await gh.close();
    await new Promise<void>((r) => hook.close(() => r()));
    p.cleanup();
  });

  it(`carries out no action twice across ${TRIALS} trials`, { timeout: 600_000 }, async () => {
    const root = p.project.root;
    const cfg = JSON.parse(readFileSync(p.project.configPath, "utf8")) as Record<string, unknown>;
    // Comments and labels go to the local GitHub; OPEN_PR to the local forge (a second config without github).
    writeFileSync(
      join(root, "pmagent.github.json"),
      JSON.stringify({ ...cfg, github: { repo: "acme/site", api_url: gh.url, token_env: "KILL_GH_TOKEN" } }),
    );
    writeFileSync(join(root, "secrets.json"), JSON.stringify({ DEPLOY_TOKEN: SECRET }));
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, KILL_GH_TOKEN: TOKEN, PMAGENT_LOG_LEVEL: "info" };
    const resumeLog = join(p.dir, "resumes.jsonl");
    const logs: string[] = [];
    let kills = 0;

    for (let trial = 0; trial < TRIALS; trial++) {
      const issue = gh.addIssue("acme/site", { title: `trial ${trial}` });
      const ws = makeWorkspace(root, `ws-${trial}`, `sprite/t${trial}`);
      const base = {
        projectId: "demo",
        runId: `run-${trial}`,
        role: "Tsugu",
        workItemId: `issue-${issue.number}`,
        workspace: ws.path,
      };
      const local: ActionRequest[] = [
        {
          ...base,
          eventHash: "open-pr",
          action: "OPEN_PR",
          blocking: true,
          parameters: { title: `PR ${trial}`, body: "", base: "main", head: `sprite/t${trial}` },
        },
        {
          ...base,
          eventHash: "notify",
          action: "NOTIFY_USER",
          blocking: false,
          parameters: { message: `trial ${trial}` },
        },
        {
          ...base,
          eventHash: "credential",
          action: "FETCH_CREDENTIAL",
          blocking: true,
          parameters: { name: "DEPLOY_TOKEN" },
        },
      ];
      const remote: ActionRequest[] = [
        { ...base, eventHash: "comment-1", action: "POST_COMMENT", blocking: false, parameters: { body: "first" } },
        { ...base, eventHash: "comment-2", action: "POST_COMMENT", blocking: false, parameters: { body: "second" } },
        {
          ...base,
          eventHash: "label",
          action: "LABEL_ISSUE",
          blocking: false,
          parameters: { labels: ["pmagent", "docs"] },
        },
      ];
      const localFile = join(p.dir, `local-${trial}.json`);
      const remoteFile = join(p.dir, `remote-${trial}.json`);
      writeFileSync(localFile, JSON.stringify(local));
      writeFileSync(remoteFile, JSON.stringify(remote));
      const killAt = Math.floor(Math.random() * 250);
      const [a, b] = await Promise.all([
        supervise([p.project.configPath, localFile, resumeLog], env, killAt),
        supervise([join(root, "pmagent.github.json"), remoteFile, resumeLog], env, Math.floor(Math.random() * 250)),
      ]);
      kills += Number(a.killed) + Number(b.killed);
      logs.push(a.stderr, b.stderr);
      // Restart: the same requests are handed over again and everything finishes.
      const [c, d] = await Promise.all([
        supervise([p.project.configPath, localFile, resumeLog], env),
        supervise([join(root, "pmagent.github.json"), remoteFile, resumeLog], env),
      ]);
      logs.push(c.stderr, d.stderr);
      expect(c.stdout).toContain("DONE");
      expect(d.stdout).toContain("DONE");

      const actions = await new ActionStore(store).list({ runId: `run-${trial}` });
      expect(actions).toHaveLength(6);
      for (const act of actions) {
        // Everything finished; a notification cut off mid-delivery is sent again under its key.
        expect(act.state).toBe("succeeded");
        if (act.blocking) expect(act.resumed).toBe(true);
      }
      // Comments: each posted exactly once (the marker finds an earlier post).
      const comments = gh.comments("acme/site", issue.number);
      for (const key of ["comment-1", "comment-2"])
        expect(comments.filter((c) => c.body.includes(commentMarker(`run-${trial}:${key}`)))).toHaveLength(1);
      expect(comments).toHaveLength(2);
      // Labels: each added once.
      const labelPosts = gh.requests.filter(
        (r) => r.method === "POST" && r.path === `/repos/acme/site/issues/${issue.number}/labels` && r.status === 200,
      );
      expect(labelPosts.flatMap((r) => (r.body as { labels: string[] }).labels).sort()).toEqual(["docs", "pmagent"]);
      // Notification: delivered; again (same Idempotency-Key, which the receiver drops) only after an interrupted attempt.
      const delivered = hookKeys.filter((k) => k === `run-${trial}:notify`).length;
      const notify = actions.find((x) => x.action === "NOTIFY_USER")!;
      expect(delivered).toBeGreaterThanOrEqual(1);
      expect(delivered).toBeLessThanOrEqual(notify.attempts);
      // Pull request: one for the head, at the workspace's commit.
      const prs = (
        await new LocalForge({ store, projectId: "demo", root, bareRepo: ".pmagent/forge.git" }).list()
      ).filter((x) => x.head === `sprite/t${trial}`);
      expect(prs).toHaveLength(1);
      expect(prs[0]!.head_sha).toBe(ws.sha);
    }
    // The kills really landed mid-run in most trials.
    expect(kills).toBeGreaterThan(TRIALS / 2);
    const resumes = readFileSync(resumeLog, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { runId: string; inputs: Record<string, unknown> });
    for (let trial = 0; trial < TRIALS; trial++)
      expect(resumes.filter((r) => r.runId === `run-${trial}`).length).toBeGreaterThanOrEqual(2);
    // The secret is nowhere in the database file or the supervisors' logs.
    expect(existsSync(join(root, ".pmagent/pmagent.db"))).toBe(true);
    for (const f of [".pmagent/pmagent.db", ".pmagent/pmagent.db-wal"])
      if (existsSync(join(root, f))) expect(readFileSync(join(root, f)).includes(SECRET)).toBe(false);
    expect(logs.join("").includes(SECRET)).toBe(false);
    expect(logs.join("")).toContain('"msg":"action attempt"');
    expect(readFileSync(resumeLog, "utf8")).not.toContain(SECRET);
  });
});
