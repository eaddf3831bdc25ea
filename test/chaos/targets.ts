/**
 * What a chaos trial's actions reach: the local GitHub stand-in (comments) and a webhook receiver
 * on 127.0.0.1 that records every delivery's Idempotency-Key, and how to judge a trial's actions
 * against them once it is over.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { commentMarker, type ActionRecord } from "../../src/lattice/index.js";
import { FakeGitHub } from "../helpers/fake-github.js";

/** Trials per experiment: a few by default (CI), many under `npm run chaos`. */
export const TRIALS = Number(process.env.PMAGENT_CHAOS_TRIALS ?? 2);
export const GH_TOKEN = "chaos-github-token";
export const GH_TOKEN_ENV = "PMAGENT_CHAOS_GH_TOKEN";
export const REPO = "acme/site";

export interface Targets {
  gh: FakeGitHub;
  /** The webhook's URL. */
  url: string;
  /** Idempotency-Key of every delivery, in arrival order (a repeat included). */
  deliveries: string[];
  /** While true, the webhook takes deliveries without answering (a slow receiver mid-delivery). */
  hold: boolean;
  /** Resolves with the key of the next delivery. */
  nextDelivery(): Promise<string>;
  close(): Promise<void>;
}

export async function startTargets(): Promise<Targets> {
  const gh = await FakeGitHub.start({ tokens: { [GH_TOKEN]: "pmagent-bot" } });
  gh.addRepo(REPO);
  const deliveries: string[] = [];
  const waiters: Array<(key: string) => void> = [];
  const held = new Set<ServerResponse>();
  const hook: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const key = String(req.headers["idempotency-key"]);
      deliveries.push(key);
      for (const w of waiters.splice(0)) w(key);
      if (targets.hold) held.add(res);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
  const targets: Targets = {
    gh,
    url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
    deliveries,
    hold: false,
    nextDelivery: () => new Promise((r) => waiters.push(r)),
    async close() {
      for (const res of held) res.destroy();
      hook.closeAllConnections();
      await gh.close();
      await new Promise<void>((r) => hook.close(() => r()));
    },
  };
  return targets;
}

/**
 * What is wrong with a trial's actions once everything was reconciled: an action not finished
 * (`pending`/`running`), one recorded failed (nothing here can fail for good), a comment posted
 * twice or not at all for a succeeded action, a notification delivered under another key, more
 * often than attempted, or not at all though it succeeded.
 */
export function actionProblems(actions: ActionRecord[], t: Targets, issue: number): string[] {
  const problems: string[] = [];
  const comments = t.gh.comments(REPO, issue);
  for (const a of actions) {
    if (a.state !== "succeeded" && a.state !== "unknown")
      problems.push(
        `${a.action} ${a.idempotency_key} is ${a.state}${a.error ? ` (${a.error.code}: ${a.error.message})` : ""}`,
      );
    if (a.action === "POST_COMMENT") {
      const posted = comments.filter((c) => c.body.includes(commentMarker(a.idempotency_key))).length;
      if (posted > 1 || (a.state === "succeeded" && posted !== 1))
        problems.push(`${a.idempotency_key}: comment posted ${posted} times (${a.state})`);
    }
    if (a.action === "NOTIFY_USER") {
      const n = t.deliveries.filter((k) => k === a.idempotency_key).length;
      if (n > a.attempts || (a.state === "succeeded" && n === 0))
        problems.push(`${a.idempotency_key}: notification delivered ${n} times in ${a.attempts} attempts (${a.state})`);
    }
  }
  return problems;
}
