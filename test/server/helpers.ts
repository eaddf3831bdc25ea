import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { buildServer, type PmagentServer } from "../../src/server/index.js";
import { REPO_ROOT } from "../helpers/proc.js";
import type { TestStore } from "../helpers/stores.js";
import { PMAGENT, testProject, type TestProject } from "../lattice/helpers.js";

export const TOKENS = { Human: "human-token-0123456789abcdef", Builder: "builder-token-0123456789abcd", Reviewer: "reviewer-token-0123456789abc" } as const;
export const TOKEN_ENV = Object.entries(TOKENS).map(([actor, token]) => `${token}=${actor}`).join(",");

export interface TestServer {
  tp: TestProject;
  server: PmagentServer;
  url: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect response bodies freely
  call(method: string, path: string, options?: { as?: keyof typeof TOKENS | null; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * A project (lane Builder → Reviewer, kernel surfaces of a degraded kernel, a git repository with
 * one commit) served on 127.0.0.1 on a free port with three tokens.
 */
export async function startServer(ts: TestStore, options: { bodyLimit?: number; env?: Record<string, string> } = {}): Promise<TestServer> {
  const tp = testProject(ts);
  cpSync(join(REPO_ROOT, "test/fixtures/oa/degraded-failing-check/share"), join(tp.root, "share"), { recursive: true });
  writeFileSync(join(tp.root, "README.md"), "demo\n");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: tp.root, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init");
  const server = buildServer({ project: tp.project, store: ts.store, port: 0, bodyLimit: options.bodyLimit, env: { PMAGENT_TOKENS: TOKEN_ENV, ...options.env }, supervisor: { pmagentCommand: PMAGENT, pollMs: 20 } });
  const url = await server.listen();
  return {
    tp,
    server,
    url,
    async call(method, path, o = {}) {
      const as = o.as === undefined ? "Human" : o.as;
      const headers: Record<string, string> = { ...(as ? { authorization: `Bearer ${TOKENS[as]}` } : {}), ...o.headers };
      let body: string | undefined;
      if (o.raw !== undefined) body = o.raw;
      else if (o.body !== undefined) body = JSON.stringify(o.body);
      if (body !== undefined) headers["content-type"] ??= "application/json";
      const res = await fetch(`${url}${path}`, { method, headers, body });
      const text = await res.text();
      return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
    },
    async close() {
      await server.close();
      tp.cleanup();
    },
  };
}
