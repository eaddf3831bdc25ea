import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type Socket } from "node:net";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, startServer, type TestServer } from "./helpers.js";

/** A raw client on loopback: what it received, and a promise of its close (bounded: a server that never closes it fails). */
interface RawClient {
  socket: Socket;
  received(): string;
  closed: Promise<string>;
}

const BOUND_MS = 10_000;

function rawClient(url: string): Promise<RawClient> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let data = "";
  socket.setEncoding("latin1");
  socket.on("data", (d: string) => (data += d));
  socket.on("error", () => undefined);
  const closed = new Promise<string>((resolve, reject) => {
    const guard = setTimeout(
      () =>
        reject(new Error(`the server kept the connection open for ${BOUND_MS} ms; received ${JSON.stringify(data)}`)),
      BOUND_MS,
    );
    socket.on("close", () => {
      clearTimeout(guard);
      resolve(data);
    });
  });
  closed.catch(() => socket.destroy());
  return new Promise((resolve) => socket.once("connect", () => resolve({ socket, received: () => data, closed })));
}

/** Write `text` a byte at a time, one every `everyMs`, until the socket closes. */
function drip(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]!);
  }, everyMs);
  socket.on("close", () => clearInterval(timer));
}

const REQUEST_TIMEOUT = /^HTTP\/1\.1 408 Request Timeout\r\n/;

describe("pmagent serve cuts off slow clients (server.headers_timeout_ms, request_timeout_ms, keep_alive_timeout_ms)", () => {
  let ts: TestStore;
  let s: TestServer;
  beforeAll(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts, {
      config: { server: { headers_timeout_ms: 300, request_timeout_ms: 600, keep_alive_timeout_ms: 200 } },
    });
  });
  afterAll(async () => {
    await s?.close();
    await ts?.cleanup();
  });

  it("closes a connection that sends nothing, headers a byte at a time, or a body slower than allowed (with or without a token)", async () => {
    const silent = await rawClient(s.url);
    const headers = await rawClient(s.url);
    drip(headers.socket, `GET /v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${"a".repeat(1000)}`, 20);
    const bodies = await Promise.all(
      [undefined, TOKENS.Human].map(async (token) => {
        const c = await rawClient(s.url);
        c.socket.write(
          `POST /v1/entries HTTP/1.1\r\nHost: 127.0.0.1\r\n${token ? `Authorization: Bearer ${token}\r\n` : ""}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
        );
        drip(c.socket, `"to": "${"x".repeat(99_000)}`, 20);
        return c;
      }),
    );
    expect(await silent.closed).toMatch(REQUEST_TIMEOUT);
    expect(await headers.closed).toMatch(REQUEST_TIMEOUT);
    // Without a token the 401 may go first; either way the connection does not outlive the request timeout.
    expect(await bodies[0]!.closed).toMatch(/^HTTP\/1\.1 (401 Unauthorized|408 Request Timeout)\r\n/);
    expect(await bodies[1]!.closed).toMatch(REQUEST_TIMEOUT);
    // The server still answers a client that sends its request in time.
    expect((await s.call("GET", "/v1/whoami")).status).toBe(200);
  });

  it("closes an idle keep-alive connection after its request was answered", async () => {
    const c = await rawClient(s.url);
    c.socket.write(`GET /v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKENS.Human}\r\n\r\n`);
    const text = await c.closed;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toContain("Keep-Alive: timeout=");
  });

  it("refuses a config whose headers timeout exceeds its request timeout", async () => {
    await expect(
      startServer(ts, { config: { server: { headers_timeout_ms: 5000, request_timeout_ms: 1000 } } }),
    ).rejects.toThrow(
      /\$\.server\.headers_timeout_ms: must not exceed request_timeout_ms \(the headers are part of the request\)/,
    );
  });
});

describe("pmagent serve caps its connections (server.max_connections)", () => {
  let ts: TestStore;
  let s: TestServer;
  beforeAll(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts, { config: { server: { max_connections: 3 } } });
  });
  afterAll(async () => {
    await s?.close();
    await ts?.cleanup();
  });

  it("closes a connection beyond the cap at once and serves again once one ends", async () => {
    let accepted = 0;
    const counted = new Promise<void>((resolve) =>
      s.server.app.server.on("connection", () => ++accepted === 3 && resolve()),
    );
    const held = await Promise.all([1, 2, 3].map(() => rawClient(s.url)));
    await counted;
    const beyond = await rawClient(s.url);
    expect(await beyond.closed).toBe("");
    expect(held.map((c) => c.socket.destroyed)).toEqual([false, false, false]);
    held[0]!.socket.destroy();
    await held[0]!.closed;
    const res = await fetch(`${s.url}/v1/whoami`, {
      headers: { authorization: `Bearer ${TOKENS.Human}`, connection: "close" },
    });
    expect(res.status).toBe(200);
    for (const c of held) c.socket.destroy();
  });
});
