import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { request } from "node:http";
import { buildServer, type PmagentServer } from "../../src/server/index.js";
import { REPO_ROOT } from "../helpers/proc.js";
import type { TestStore } from "../helpers/stores.js";
import { PMAGENT, testProject, type TestProject } from "../lattice/helpers.js";

export const TOKENS = {
  Human: "human-token-0123456789abcdef",
  Builder: "builder-token-0123456789abcd",
  Reviewer: "reviewer-token-0123456789abc",
} as const;
export const TOKEN_ENV = Object.entries(TOKENS)
  .map(([actor, token]) => `${token}=${actor}`)
  .join(",");

export interface TestServer {
  tp: TestProject;
  server: PmagentServer;
  url: string;
  call(
    method: string,
    path: string,
    options?: { as?: keyof typeof TOKENS | null; body?: unknown; raw?: string; headers?: Record<string, string> },
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect response bodies freely
  ): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * A project (lane Builder → Reviewer, kernel surfaces of a degraded kernel, a git repository with
 * one commit) served on 127.0.0.1 on a free port with three tokens.
 */
export async function startServer(
  ts: TestStore,
  options: {
    bodyLimit?: number;
    env?: Record<string, string>;
    consoleDir?: string;
    config?: Record<string, unknown>;
  } = {},
): Promise<TestServer> {
  const tp = testProject(ts, options.config);
  cpSync(join(REPO_ROOT, "test/fixtures/oa/degraded-failing-check/share"), join(tp.root, "share"), { recursive: true });
  writeFileSync(join(tp.root, "README.md"), "demo\n");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: tp.root, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init");
  const server = await buildServer({
    project: tp.project,
    store: ts.store,
    port: 0,
    bodyLimit: options.bodyLimit,
    consoleDir: options.consoleDir,
    env: { PMAGENT_TOKENS: TOKEN_ENV, ...options.env },
    supervisor: { pmagentCommand: PMAGENT, pollMs: 20 },
  });
  const url = await server.listen();
  return {
    tp,
    server,
    url,
    async call(method, path, o = {}) {
      const as = o.as === undefined ? "Human" : o.as;
      const headers: Record<string, string> = {
        ...(as ? { authorization: `Bearer ${TOKENS[as]}` } : {}),
        ...o.headers,
      };
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
export async function readSse(
  url: string,
  headers: Record<string, string>,
  until: (frames: SseFrame[]) => boolean,
): Promise<SseFrame[]> {
  const stream = await watchSse(url, headers);
  try {
    return (await stream.until(until)).map(({ id, event, data }) =>
      id === undefined ? { event, data } : { id, event, data },
    );
  } finally {
    stream.close();
  }
}

export interface SseWatch {
  /** Every event so far, with the bytes of each as received. */
  frames: Array<SseFrame & { bytes: number }>;
  /** Bytes of comment blocks (`: keep-alive`) so far. */
  commentBytes(): number;
  /** Resolve once `until(frames)` holds (checked as events arrive), or when the server ends the stream. */
  until(until: (frames: SseFrame[]) => boolean): Promise<SseFrame[]>;
  close(): void;
}

/** An open stream of server-sent events, read as they come for as long as it is open. */
export async function watchSse(url: string, headers: Record<string, string>): Promise<SseWatch> {
  const ac = new AbortController();
  const res = await fetch(url, { headers, signal: ac.signal });
  if (!res.ok) throw new Error(`SSE ${url}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const frames: Array<SseFrame & { bytes: number }> = [];
  let comments = 0;
  let ended = false;
  const waiters = new Set<() => void>();
  void (async () => {
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
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
          if (frame.event) frames.push({ ...(frame as SseFrame), bytes: Buffer.byteLength(block) + 2 });
          else if (block.startsWith(":")) comments += Buffer.byteLength(block) + 2;
          for (const wake of waiters) wake();
        }
      }
    } catch {
      // Aborted by close().
    } finally {
      ended = true;
      for (const wake of waiters) wake();
    }
  })();
  return {
    frames,
    commentBytes: () => comments,
    until: (until) =>
      new Promise((resolve) => {
        const check = () => {
          if (!until(frames) && !ended) return;
          waiters.delete(check);
          resolve(frames);
        };
        waiters.add(check);
        check();
      }),
    close: () => ac.abort(),
  };
}

export interface RawResponse {
  method: string;
  status: number;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect response bodies freely
  body: any;
}

/**
 * One request through node:http with the path sent byte for byte (fetch would normalise `.`, `..`
 * and some escapes before sending) and any Host. A live stream (SSE) is cut once its headers are
 * in: its status already says whether it answered.
 */
export function rawRequest(
  base: string,
  o: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        method: o.method,
        path: o.path,
        headers: { ...(o.body !== undefined ? { "content-type": "application/json" } : {}), ...o.headers },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (String(res.headers["content-type"]).startsWith("text/event-stream")) {
          res.destroy();
          resolve({ method: o.method, status, text: "(event stream)", body: undefined });
          return;
        }
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ method: o.method, status, text, body });
        });
      },
    );
    // A guard, not a measurement: a server that never answers is reported as status 0, not a hung test.
    let timedOut = false;
    req.setTimeout(15_000, () => {
      timedOut = true;
      req.destroy();
      resolve({ method: o.method, status: 0, text: "(no answer within 15 s)", body: undefined });
    });
    req.on("error", (err) => (timedOut ? undefined : reject(err)));
    req.end(o.body);
  });
}

/** The JSON-RPC request an MCP client sends first after initialize: list the tools. */
export const MCP_LIST_TOOLS = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
export const MCP_HEADERS = { accept: "application/json, text/event-stream" };

/** A route to probe: its method, a concrete path and the body and headers a real client would send. */
export interface RouteTarget {
  method: string;
  path: string;
  body?: string;
  headers: Record<string, string>;
}

const concrete = (url: string) => url.replace(/\{[^}]+\}|:[A-Za-z_]+/g, "x").replace(/\*$/, "x");

/**
 * Every operation of the OpenAPI document, then every other route the server registered that is
 * not public (live streams, whoami, /mcp …): read from the server, never listed by hand.
 */
export function routeTargets(s: TestServer): RouteTarget[] {
  const out = new Map<string, RouteTarget>();
  const add = (method: string, url: string) => {
    const path = concrete(url);
    const mcp = url === "/mcp";
    out.set(`${method} ${path}`, {
      method,
      path,
      body: method === "POST" ? (mcp ? MCP_LIST_TOOLS : "{}") : undefined,
      headers: mcp ? MCP_HEADERS : {},
    });
  };
  const paths = (s.server.openapi as { paths: Record<string, Record<string, unknown>> }).paths;
  for (const [url, ops] of Object.entries(paths)) for (const method of Object.keys(ops)) add(method.toUpperCase(), url);
  for (const e of s.server.endpoints) if (!e.public) add(e.method, e.url);
  return [...out.values()];
}

const hex = (c: string, lower: boolean) =>
  [...Buffer.from(c)]
    .map((b) => `%${b.toString(16).padStart(2, "0")}`)
    .map((h) => (lower ? h : h.toUpperCase()))
    .join("");

/**
 * Other spellings of one path that a router might take for the same route: percent-encoded (every
 * character alone, a whole segment, upper and lower hex, the slash itself), double-encoded,
 * other case, doubled slashes, a trailing slash, dot segments.
 */
export function pathSpellings(path: string): Array<{ kind: string; path: string }> {
  const out: Array<{ kind: string; path: string }> = [];
  const segments = path.split("/");
  for (let i = 0; i < path.length; i++) {
    if (path[i] !== "/")
      out.push({
        kind: "percent-encoded",
        path: `${path.slice(0, i)}${hex(path[i]!, i % 2 === 0)}${path.slice(i + 1)}`,
      });
  }
  for (let i = 1; i < segments.length; i++) {
    const enc = segments.map((s, j) => (j === i ? [...s].map((c) => hex(c, false)).join("") : s)).join("/");
    out.push({ kind: "percent-encoded", path: enc }, { kind: "double-encoded", path: enc.replace(/%/g, "%25") });
    out.push({ kind: "case-changed", path: segments.map((s, j) => (j === i ? s.toUpperCase() : s)).join("/") });
    out.push({ kind: "doubled-slash", path: segments.map((s, j) => (j === i ? `/${s}` : s)).join("/") });
    if (i < segments.length - 1)
      out.push({
        kind: "percent-encoded",
        path: segments.slice(0, i + 1).join("/") + "%2F" + segments.slice(i + 1).join("/"),
      });
    out.push({ kind: "dot-segment", path: [...segments.slice(0, i), ".", ...segments.slice(i)].join("/") });
  }
  out.push({ kind: "percent-encoded", path: [...path].map((c) => (c === "/" ? c : hex(c, true))).join("") });
  out.push({
    kind: "double-encoded",
    path: [...path].map((c) => (c === "/" ? c : hex(c, false).replace(/%/g, "%25"))).join(""),
  });
  out.push({ kind: "case-changed", path: path.toUpperCase() });
  out.push({ kind: "doubled-slash", path: `/${path}` }, { kind: "doubled-slash", path: path.replace(/\//g, "//") });
  out.push(
    { kind: "trailing-slash", path: `${path}/` },
    { kind: "trailing-slash", path: `${[...path].map((c) => (c === "/" ? c : hex(c, false))).join("")}/` },
  );
  return out;
}

/** Resolve with `check()`'s first truthy answer, asked every few ms; fail after `boundMs` (a guard, not a measurement). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  what: string,
  boundMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
