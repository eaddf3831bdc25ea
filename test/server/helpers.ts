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
export async function startServer(ts: TestStore, options: { bodyLimit?: number; env?: Record<string, string>; consoleDir?: string } = {}): Promise<TestServer> {
  const tp = testProject(ts);
  cpSync(join(REPO_ROOT, "test/fixtures/oa/degraded-failing-check/share"), join(tp.root, "share"), { recursive: true });
  writeFileSync(join(tp.root, "README.md"), "demo\n");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: tp.root, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init");
  const server = buildServer({ project: tp.project, store: ts.store, port: 0, bodyLimit: options.bodyLimit, consoleDir: options.consoleDir, env: { PMAGENT_TOKENS: TOKEN_ENV, ...options.env }, supervisor: { pmagentCommand: PMAGENT, pollMs: 20 } });
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

export interface SseFrame {
  id?: string;
  event: string;
  data: unknown;
}

/** Read server-sent events until `until(frames)` holds (or the server ends the stream). */
export async function readSse(url: string, headers: Record<string, string>, until: (frames: SseFrame[]) => boolean): Promise<SseFrame[]> {
  const ac = new AbortController();
  const res = await fetch(url, { headers, signal: ac.signal });
  if (!res.ok) throw new Error(`SSE ${url}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const frames: SseFrame[] = [];
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return frames;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const frame: Partial<SseFrame> = {};
        for (const line of block.split("\n")) {
          const [k, ...rest] = line.split(": ");
          const v = rest.join(": ");
          if (k === "id") frame.id = v;
          else if (k === "event") frame.event = v;
          else if (k === "data") frame.data = JSON.parse(v);
        }
        if (frame.event) frames.push(frame as SseFrame);
        if (until(frames)) return frames;
      }
    }
  } finally {
    ac.abort();
  }
}
