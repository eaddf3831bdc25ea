/**
 * lattice-b's crash harness, extended for actions: `pmagent run` (a real supervisor process with
 * the action executor wired in) is SIGKILLed at random points while its sprite's actions are in
 * flight; a new supervisor reconciles. No comment, label, notification or pull request may happen
 * twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ActionStore, commentMarker, type Supervisor } from "../../../src/lattice/index.js";
import { projectSupervisor } from "../../../src/app/index.js";
import { FakeGitHub } from "../../helpers/fake-github.js";
import { openSqliteTestStore } from "../../helpers/stores.js";
import { crashTrial } from "../harness.js";
import { prng } from "../../helpers/prng.js";
import { PMAGENT, testProject } from "../helpers.js";

const TRIALS = Number(process.env.CRASH_TRIALS ?? 20);
const SEED = Number(process.env.CRASH_SEED ?? 20261123);
const TOKEN = "crash-github-token";

describe("supervisor process killed with actions in flight, then restarted", () => {
  let gh: FakeGitHub;
  let hook: Server;
  const delivered: string[] = [];
  let remote: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    gh = await FakeGitHub.start({ tokens: { [TOKEN]: "pmagent-bot" } });
    gh.addRepo("acme/site");
    hook = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        delivered.push(String(req.headers["idempotency-key"]));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
    remote = mkdtempSync(join(tmpdir(), "pmagent-crash-remote-"));
    execFileSync("git", ["init", "-q", "--bare", remote]);
    // The `pmagent run` children inherit these: the supervisor's token and the "GitHub" git remote.
    process.env.CRASH_GH_TOKEN = TOKEN;
    process.env.PMAGENT_GITHUB_GIT_URL = remote;
  });
  afterAll(async () => {
    process.env = saved;
    await gh.close();
    await new Promise<void>((r) => hook.close(() => r()));
    rmSync(remote, { recursive: true, force: true });
  });

  it(`carries out no action twice across ${TRIALS} trials (seed ${SEED})`, { timeout: 900_000 }, async () => {
    const ts = await openSqliteTestStore();
    const tp = testProject(ts, {
      github: { repo: "acme/site", api_url: gh.url, token_env: "CRASH_GH_TOKEN" },
      notify: { webhook_url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook` },
    });
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
        cwd: tp.root,
        stdio: "ignore",
      });
    git("init", "-q", "-b", "main");
    writeFileSync(join(tp.root, ".gitignore"), ".pmagent/\n*.scenario.json\n");
    git("add", ".");
    git("commit", "-q", "-m", "initial");
    git("push", "-q", remote, "main");
    const random = prng(SEED);
    let sup: Supervisor | undefined;
    const restart = () =>
      (sup = projectSupervisor({
        store: ts.store,
        project: tp.project,
        pmagentCommand: PMAGENT,
        pollMs: 20,
        consoleWrite: () => undefined,
      }));
    let interrupted = 0;
    try {
      for (let trial = 0; trial < TRIALS; trial++) {
        const issue = gh.addIssue("acme/site", { title: `trial ${trial}` });
        const branch = `sprite/crash-${trial}`;
        const act = (action: string, parameters: Record<string, unknown>, blocking = false) => ({
          emit: "ACTION_REQUEST",
          payload: { action, parameters, blocking },
        });
        const steps = [
          {
            sh: `git checkout -q -b ${branch} && echo ${trial} > work.txt && git add work.txt && git -c user.name=s -c user.email=s@example.invalid commit -q -m work`,
          },
          act("POST_COMMENT", { body: `first ${trial}`, issue_number: issue.number }),
          { sleep: 5 },
          act("LABEL_ISSUE", { labels: ["pmagent"], issue_number: issue.number }),
          act("NOTIFY_USER", { message: `trial ${trial}` }),
          { sleep: 5 },
          act("POST_COMMENT", { body: `second ${trial}`, issue_number: issue.number }),
          act("OPEN_PR", { title: `Trial ${trial}`, body: "", base: "main", head: branch }, true),
          {
            waiting: {
              reason: "OPEN_PR",
              expected_inputs: { number: "integer", url: "string", head: "string", base: "string" },
            },
          },
        ];
        const on_resume = [{ emit: "COMPLETED", payload: { status: "success", summary: `trial ${trial}` } }];
        const kill =
          random() < 0.1
            ? { afterMs: Math.floor(random() * 1500) }
            : { afterOutboxLines: Math.floor(random() * 7), jitterMs: Math.floor(random() * 40) };
        const result = await crashTrial({
          root: tp.root,
          projectId: "demo",
          store: ts.store,
          storeEnv: ts.env,
          restart,
          role: "Builder",
          command: tp.sprite(`t${trial}`, { steps, on_resume }),
          kill,
        });
        for (const run of result.runs) await sup!.whenIdle(run.id);
        const why = `trial ${trial} (kill ${JSON.stringify(kill)}, seed ${SEED}): ${result.restart}`;

        const actions = (
          await Promise.all(result.runs.map((r) => new ActionStore(ts.store).list({ runId: r.id })))
        ).flat();
        interrupted += actions.filter((a) => a.attempts > 1).length;
        const comments = gh.comments("acme/site", issue.number);
        for (const a of actions.filter((x) => x.action === "POST_COMMENT")) {
          const posted = comments.filter((c) => c.body.includes(commentMarker(a.idempotency_key))).length;
          expect(posted, why).toBeLessThanOrEqual(1);
          if (a.state === "succeeded") expect(posted, why).toBe(1);
        }
        expect(comments.length, why).toBeLessThanOrEqual(2);
        const labelPosts = gh.requests.filter(
          (r) => r.method === "POST" && r.path === `/repos/acme/site/issues/${issue.number}/labels` && r.status === 200,
        );
        expect(labelPosts.length, why).toBeLessThanOrEqual(1);
        for (const a of actions.filter((x) => x.action === "NOTIFY_USER")) {
          // Sent again (same Idempotency-Key, which the receiver drops) only after an interrupted attempt; never recorded failed.
          const n = delivered.filter((k) => k === a.idempotency_key).length;
          expect(n, why).toBeLessThanOrEqual(a.attempts);
          expect(a.state, why).not.toBe("failed");
          if (a.state === "succeeded") expect(n, why).toBeGreaterThanOrEqual(1);
        }
        const pulls = gh.pulls("acme/site").filter((p) => p.head.ref === branch);
        expect(pulls.length, why).toBeLessThanOrEqual(1);
        const pr = actions.find((x) => x.action === "OPEN_PR");
        if (pr?.state === "succeeded") expect(pulls.length, why).toBe(1);
      }
      // The kills landed while actions were under way in some trials.
      expect(interrupted).toBeGreaterThan(0);
    } finally {
      await ts.cleanup();
      tp.cleanup();
    }
  });
});
