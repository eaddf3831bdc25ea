import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { startServer, type TestServer } from "./helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI === "true")
  throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium for the browser tests`);
if (!haveChromium)
  console.warn(`${CHROMIUM} is not installed: skipping the DNS-rebinding browser test (apt-get install -y chromium)`);

/**
 * DNS rebinding in a real browser: the attacker's page is served under its own name, then that name
 * resolves to 127.0.0.1 (Chromium's host resolver rules play the rebound DNS), so the page's
 * same-origin requests reach a token-less pmagent with `Host: evil.example:PORT`.
 */
describe.skipIf(!haveChromium)("a DNS-rebinding page in headless Chromium", () => {
  let ts: TestStore;
  let s: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts, { env: { PMAGENT_TOKENS: "" } });
    expect(
      (
        await s.call("POST", "/v1/entries", {
          as: null,
          body: { id: "secret-plan", to: "Builder", kind: "build_request" },
        })
      ).status,
    ).toBe(201);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--host-resolver-rules=MAP evil.example 127.0.0.1",
        // Chromium's own local-network guard would stop this page before pmagent sees it; other
        // browsers (and older Chromiums) have none, so test pmagent's refusal without it.
        "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await s.close();
    await ts.cleanup();
  });

  it("gets 403 host_not_allowed from the API, the live stream and /mcp, and never the data", async () => {
    const port = new URL(s.url).port;
    const page = await browser.newPage();
    const origin = `http://evil.example:${port}`;
    // Only the attacker's document comes from "their" server; everything else goes to 127.0.0.1.
    await page.route(`${origin}/attack.html`, (route) =>
      route.fulfill({ contentType: "text/html", body: "<!doctype html><title>cats</title>" }),
    );
    await page.goto(`${origin}/attack.html`);
    const answers = await page.evaluate(async () => {
      const out: Array<[string, number, string]> = [];
      const tries: Array<[string, RequestInit]> = [
        ["/v1/entries", {}],
        ["/%76%31/entries", {}],
        ["/v1/entries/stream", {}],
        [
          "/v1/entries",
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ to: "Builder", kind: "build_request" }),
          },
        ],
        [
          "/mcp",
          {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          },
        ],
      ];
      for (const [path, init] of tries) {
        const r = await fetch(path, init);
        // A live stream never ends: its status is the answer.
        if (r.headers.get("content-type")?.startsWith("text/event-stream")) {
          await r.body?.cancel();
          out.push([path, r.status, '{"error":{"code":"(an open event stream)"}}']);
        } else out.push([path, r.status, await r.text()]);
      }
      return out;
    });
    for (const [path, status, text] of answers) {
      expect([path, status, (JSON.parse(text) as { error?: { code?: string } }).error?.code]).toEqual([
        path,
        403,
        "host_not_allowed",
      ]);
      expect(text).not.toContain("secret-plan");
    }
    // Nothing was posted in the human's name.
    expect((await s.call("GET", "/v1/entries", { as: null })).body.items).toHaveLength(1);
    await page.close();
  });
});
