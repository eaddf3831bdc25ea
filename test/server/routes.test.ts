import { connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import {
  MCP_HEADERS,
  MCP_LIST_TOOLS,
  TOKENS,
  pathSpellings,
  rawRequest,
  routeTargets,
  startServer,
  type RawResponse,
  type TestServer,
} from "./helpers.js";

/** Send every spelling of every target (a few at a time) and collect the answers that break `ok`. */
async function probe(
  s: TestServer,
  headers: Record<string, string>,
  ok: (r: RawResponse) => boolean,
): Promise<string[]> {
  const jobs: Array<() => Promise<string | undefined>> = [];
  for (const t of routeTargets(s)) {
    for (const sp of [{ kind: "as declared", path: t.path }, ...pathSpellings(t.path)]) {
      jobs.push(async () => {
        const r = await rawRequest(s.url, {
          method: t.method,
          path: sp.path,
          body: t.body,
          headers: { ...t.headers, ...headers },
        });
        return ok(r) ? undefined : `${t.method} ${sp.path} (${sp.kind}) → ${r.status} ${r.text.slice(0, 80)}`;
      });
    }
  }
  const bad: string[] = [];
  for (let i = 0; i < jobs.length; i += 8)
    for (const b of await Promise.all(jobs.slice(i, i + 8).map((j) => j()))) if (b) bad.push(b);
  return bad;
}

/** The error code of a refusal; a HEAD answer has no body, so its status alone speaks. */
const errorCode = (r: RawResponse): string | undefined =>
  r.method === "HEAD" ? "(HEAD)" : (r.body as { error?: { code?: string } } | undefined)?.error?.code;
const refused = (status: number, code: string) => (r: RawResponse) =>
  r.status === status && (errorCode(r) === code || errorCode(r) === "(HEAD)") && !r.text.includes("secret-plan");

describe("routes with bearer tokens", () => {
  let ts: TestStore;
  let s: TestServer;

  beforeEach(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts);
    // Data a leak would show.
    expect(
      (await s.call("POST", "/v1/entries", { body: { id: "secret-plan", to: "Builder", kind: "build_request" } }))
        .status,
    ).toBe(201);
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
  });

  it("the encoded path of the report (GET /%76%31/entries, POST /%6dcp) is refused without a token", async () => {
    const entries = await rawRequest(s.url, { method: "GET", path: "/%76%31/entries" });
    expect(entries.status).toBe(401);
    expect(entries.text).not.toContain("secret-plan");
    const mcp = await rawRequest(s.url, { method: "POST", path: "/%6dcp", body: MCP_LIST_TOOLS, headers: MCP_HEADERS });
    expect(mcp.status).toBe(401);
    expect(mcp.body).toEqual({
      error: { code: "unauthorized", message: "this server needs a bearer token: send Authorization: Bearer <token>" },
    });
  });

  it("every spelling of every route (OpenAPI, streams, /mcp) answers 401 without a token, never data", async () => {
    expect(routeTargets(s).length).toBeGreaterThan(20);
    const bad = await probe(s, {}, refused(401, "unauthorized"));
    expect(bad).toEqual([]);
  });

  it("an unknown token or a cookie with an unknown token gets nothing under any spelling either", async () => {
    const bad = await probe(s, { cookie: "pmagent_token=not-a-known-token-000000" }, refused(401, "unauthorized"));
    expect(bad).toEqual([]);
    const cookieBad = await rawRequest(s.url, {
      method: "GET",
      path: "/v1/entries",
      headers: { cookie: "pmagent_token=%E0%A4%A" },
    });
    expect(cookieBad.status).toBe(401);
  });

  it("a path the router cannot decode is a 400 invalid_url in the API's error shape, never a route", async () => {
    const r = await rawRequest(s.url, { method: "GET", path: "/%76%31/entries/%%36" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: {
        code: "invalid_url",
        message: "the request path is not a valid URL: a % must start an escape of two hex digits",
      },
    });
  });

  it("the route the router matched decides, so an encoded path with a token reaches the same route", async () => {
    const r = await rawRequest(s.url, {
      method: "GET",
      path: "/%76%31/entries",
      headers: { authorization: `Bearer ${TOKENS.Builder}` },
    });
    expect(r.status).toBe(200);
    expect(r.body.items[0].entry.id).toBe("secret-plan");
  });

  it("only the console's files, the favicon, the OpenAPI document, sign-in and sign-out are public, each by its route's mark", async () => {
    const pub = s.server.endpoints.filter((e) => e.public).map((e) => `${e.method} ${e.url}`);
    expect(pub.sort()).toEqual([
      "DELETE /v1/session",
      "GET /",
      "GET /console/*",
      "GET /favicon.ico",
      "GET /openapi.json",
      "HEAD /",
      "HEAD /console/*",
      "HEAD /favicon.ico",
      "HEAD /openapi.json",
      "POST /v1/session",
    ]);
    expect((await rawRequest(s.url, { method: "GET", path: "/openapi.json" })).status).toBe(200);
    // Unmatched paths are not public: no token, no answer about them.
    const unknown = await rawRequest(s.url, { method: "GET", path: "/v2/anything" });
    expect(unknown.status).toBe(401);
    expect(
      (
        await rawRequest(s.url, {
          method: "GET",
          path: "/v2/anything",
          headers: { authorization: `Bearer ${TOKENS.Human}` },
        })
      ).body.error.code,
    ).toBe("route_not_found");
  });

  it("a cookie sent from another origin is refused on every route and at sign-in (403 origin_not_allowed)", async () => {
    const headers = { cookie: `pmagent_token=${TOKENS.Human}`, origin: "http://evil.example" };
    const bad = await probe(s, headers, refused(403, "origin_not_allowed"));
    expect(bad).toEqual([]);
    const denied = await rawRequest(s.url, {
      method: "POST",
      path: "/v1/entries",
      headers,
      body: JSON.stringify({ to: "Builder", kind: "build_request" }),
    });
    expect(denied.body.error.message).toBe(
      'Origin "http://evil.example" is not this server\'s: a request authenticated by the session cookie must come from the console served by this server; other clients send Authorization: Bearer <token>',
    );
    // A same-site page on another port of localhost is another origin: SameSite=Strict alone would send the cookie.
    const port = new URL(s.url).port;
    const sameSite = await rawRequest(s.url, {
      method: "POST",
      path: "/v1/entries",
      headers: { ...headers, host: `localhost:${port}`, origin: "http://localhost:8080" },
      body: JSON.stringify({ to: "Builder", kind: "build_request" }),
    });
    expect(sameSite.status).toBe(403);
    const login = await rawRequest(s.url, {
      method: "POST",
      path: "/v1/session",
      headers: { origin: "http://evil.example" },
      body: JSON.stringify({ token: TOKENS.Builder }),
    });
    expect(login.status).toBe(403);
    expect(login.body.error.code).toBe("origin_not_allowed");
  });

  it("the console's own origin with its cookie works, and a bearer token works from any origin", async () => {
    const host = new URL(s.url).host;
    const own = { cookie: `pmagent_token=${TOKENS.Human}`, origin: `http://${host}` };
    const posted = await rawRequest(s.url, {
      method: "POST",
      path: "/v1/entries",
      headers: own,
      body: JSON.stringify({ id: "from-console", to: "Builder", kind: "build_request" }),
    });
    expect(posted.status).toBe(201);
    expect(posted.body.entry.from).toBe("Human");
    const login = await rawRequest(s.url, {
      method: "POST",
      path: "/v1/session",
      headers: { origin: `http://${host}` },
      body: JSON.stringify({ token: TOKENS.Builder }),
    });
    expect(login.body).toEqual({ actor: "Builder" });
    const bearer = await rawRequest(s.url, {
      method: "GET",
      path: "/v1/entries",
      headers: { authorization: `Bearer ${TOKENS.Reviewer}`, origin: "http://evil.example" },
    });
    expect(bearer.status).toBe(200);
  });
});

describe("routes without tokens (loopback)", () => {
  let ts: TestStore;
  let s: TestServer;
  let port: string;

  beforeEach(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts, {
      env: { PMAGENT_TOKENS: "" },
      config: { server: { allowed_hosts: ["pmagent.lan", "proxy.lan:8443"] } },
    });
    port = new URL(s.url).port;
    expect(
      (
        await s.call("POST", "/v1/entries", {
          as: null,
          body: { id: "secret-plan", to: "Builder", kind: "build_request" },
        })
      ).status,
    ).toBe(201);
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
  });

  it("a DNS-rebinding page (Host evil.example) gets 403 host_not_allowed on every spelling of every route, /mcp and the console included", async () => {
    const bad = await probe(s, { host: `evil.example:${port}` }, refused(403, "host_not_allowed"));
    expect(bad).toEqual([]);
    for (const path of ["/", "/console/app.js", "/openapi.json", "/nothing-here"]) {
      expect(
        (await rawRequest(s.url, { method: "GET", path, headers: { host: `evil.example:${port}` } })).status,
        path,
      ).toBe(403);
    }
    const r = await rawRequest(s.url, {
      method: "GET",
      path: "/v1/entries",
      headers: { host: `rebind.evil.example:${port}`, origin: `http://rebind.evil.example:${port}` },
    });
    expect(r.body).toEqual({
      error: {
        code: "host_not_allowed",
        message: `Host "rebind.evil.example:${port}" is not allowed: without bearer tokens this server answers only to localhost:${port}, 127.0.0.1:${port}, [::1]:${port}, pmagent.lan:${port}, proxy.lan:8443 (a web page reaching it under another name would act as a human); add the name to server.allowed_hosts in the config, or configure tokens`,
      },
    });
  });

  it("refuses a loopback name on another port, a missing or malformed Host, and names that only start like loopback", async () => {
    for (const host of [
      `localhost:${Number(port) + 1}`,
      "localhost",
      `127.0.0.1.evil.example:${port}`,
      `localhost.evil.example:${port}`,
      `127.0.0.1:${port}@evil.example`,
      `pmagent.lan:${Number(port) + 1}`,
      `proxy.lan:${port}`,
    ]) {
      const r = await rawRequest(s.url, { method: "GET", path: "/v1/entries", headers: { host } });
      expect([host, r.status, errorCode(r)]).toEqual([host, 403, "host_not_allowed"]);
    }
    // HTTP/1.0 may leave Host out; node:http always sends one, so write the request by hand.
    const { hostname } = new URL(s.url);
    const answer = await new Promise<string>((resolve, reject) => {
      let text = "";
      const socket = connect(Number(port), hostname, () => socket.end("GET /v1/entries HTTP/1.0\r\n\r\n"));
      socket
        .setEncoding("utf8")
        .on("data", (d: string) => (text += d))
        .on("end", () => resolve(text))
        .on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain('"code":"host_not_allowed","message":"Host \\"\\" is not allowed');
  });

  it("refuses a foreign Host even on a path the router cannot decode", async () => {
    const r = await rawRequest(s.url, {
      method: "GET",
      path: "/v1/%%36entries",
      headers: { host: `evil.example:${port}` },
    });
    expect([r.status, errorCode(r)]).toEqual([403, "host_not_allowed"]);
    expect(errorCode(await rawRequest(s.url, { method: "GET", path: "/v1/%%36entries" }))).toBe("invalid_url");
  });

  it("answers loopback names (any case) and the configured allowed hosts", async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LocalHost:${port}`,
      `[::1]:${port}`,
      `pmagent.lan:${port}`,
      "proxy.lan:8443",
    ]) {
      const r = await rawRequest(s.url, { method: "GET", path: "/v1/entries", headers: { host } });
      expect(r.status, host).toBe(200);
      expect(r.body.items[0].entry.id).toBe("secret-plan");
    }
  });

  it("refuses a foreign Origin (403 origin_not_allowed) on every route, even with a loopback Host", async () => {
    const bad = await probe(s, { origin: "http://evil.example" }, refused(403, "origin_not_allowed"));
    expect(bad).toEqual([]);
    for (const origin of [
      "null",
      `http://localhost:${Number(port) + 1}`,
      `http://evil.example:${port}`,
      `file://`,
      "not a url",
      `ftp://127.0.0.1:${port}`,
    ]) {
      const r = await rawRequest(s.url, {
        method: "POST",
        path: "/v1/entries",
        headers: { origin },
        body: JSON.stringify({ to: "Builder", kind: "build_request" }),
      });
      expect([r.status, errorCode(r)], origin).toEqual([403, "origin_not_allowed"]);
    }
    const r = await rawRequest(s.url, {
      method: "GET",
      path: "/v1/entries",
      headers: { origin: "http://evil.example" },
    });
    expect(r.body.error.message).toBe(
      `Origin "http://evil.example" is not allowed: without bearer tokens this server answers only to pages served from localhost:${port}, 127.0.0.1:${port}, [::1]:${port}, pmagent.lan:${port}, proxy.lan:8443; add the name to server.allowed_hosts in the config, or configure tokens`,
    );
  });

  it("accepts the console's own origin and the allowed hosts' origins", async () => {
    for (const origin of [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      `http://[::1]:${port}`,
      `http://pmagent.lan:${port}`,
      "https://proxy.lan:8443",
    ]) {
      const r = await rawRequest(s.url, {
        method: "POST",
        path: "/v1/entries",
        headers: { origin },
        body: JSON.stringify({ to: "Builder", kind: "build_request" }),
      });
      expect(r.status, origin).toBe(201);
    }
  });

  it("/mcp answers a loopback Host and refuses a foreign one with the same JSON error", async () => {
    const ok = await rawRequest(s.url, { method: "POST", path: "/mcp", body: MCP_LIST_TOOLS, headers: MCP_HEADERS });
    expect(ok.status).toBe(200);
    const evil = await rawRequest(s.url, {
      method: "POST",
      path: "/mcp",
      body: MCP_LIST_TOOLS,
      headers: { ...MCP_HEADERS, host: `evil.example:${port}` },
    });
    expect([evil.status, errorCode(evil)]).toEqual([403, "host_not_allowed"]);
  });
});

describe("server.allowed_hosts in the config", () => {
  it("takes host names with an optional port and says what it expects otherwise", () => {
    const base = {
      project_id: "demo",
      lanes: [{ layer: "l", name: "n", roles: [{ name: "R", allowed_kinds: ["k"] }] }],
    };
    expect(
      parseConfig(
        JSON.stringify({ ...base, server: { allowed_hosts: ["pmagent.lan", "pmagent.lan:7420", "[::1]:80"] } }),
        "c.json",
      ).server.allowed_hosts,
    ).toHaveLength(3);
    expect(parseConfig(JSON.stringify(base), "c.json").server.allowed_hosts).toEqual([]);
    for (const bad of ["http://pmagent.lan", "pmagent.lan/x", "*.lan", ""]) {
      expect(() => parseConfig(JSON.stringify({ ...base, server: { allowed_hosts: [bad] } }), "c.json"), bad).toThrow(
        "$.server.allowed_hosts[0]: expected a host name with an optional port, e.g. pmagent.lan or pmagent.lan:7420",
      );
    }
  });
});
