/**
 * Chaos: random spellings of every route's path (percent-encoding with either hex case, double
 * encoding, case changes, doubled and encoded slashes, dot segments, trailing slashes, query and
 * matrix suffixes, in any combination) never reach data without a token, nor from a foreign Host
 * on a token-less server. Runs: PMAGENT_CHAOS_RUNS (default 100; `npm run chaos` for more).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import {
  TOKENS,
  rawRequest,
  routeTargets,
  startServer,
  type RawResponse,
  type RouteTarget,
  type TestServer,
} from "../server/helpers.js";

const RUNS = Number(process.env.PMAGENT_CHAOS_RUNS ?? 100);

const hex = (c: string, upper: boolean) => {
  const h = [...Buffer.from(c)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
  return upper ? h.toUpperCase() : h;
};

/** One change to a path; `at` picks the position (modulo the path's length). */
type Edit = {
  op: "encode" | "double" | "case" | "slash" | "encode-slash" | "dot" | "trailing" | "suffix";
  at: number;
  upper: boolean;
  suffix: string;
};

function apply(path: string, e: Edit): string {
  const i = e.at % path.length;
  const slashes = [...path].flatMap((c, j) => (c === "/" ? [j] : []));
  const s = slashes[e.at % slashes.length] ?? 0;
  switch (e.op) {
    case "encode":
      return path[i] === "/" || path[i] === "%"
        ? path
        : `${path.slice(0, i)}${hex(path[i]!, e.upper)}${path.slice(i + 1)}`;
    case "double":
      return path.replace(/%/g, "%25");
    case "case":
      return `${path.slice(0, i)}${e.upper ? path[i]!.toUpperCase() : path[i]!.toLowerCase()}${path.slice(i + 1)}`;
    case "slash":
      return `${path.slice(0, s)}/${path.slice(s)}`;
    case "encode-slash":
      return s === 0 ? path : `${path.slice(0, s)}${e.upper ? "%2F" : "%2f"}${path.slice(s + 1)}`;
    case "dot":
      return `${path.slice(0, s)}/${e.upper ? "." : "x/.."}${path.slice(s)}`;
    case "trailing":
      return `${path}/`;
    case "suffix":
      return `${path}${e.suffix}`;
  }
}

const edit: fc.Arbitrary<Edit> = fc.record({
  op: fc.constantFrom("encode", "double", "case", "slash", "encode-slash", "dot", "trailing", "suffix"),
  at: fc.nat(200),
  upper: fc.boolean(),
  suffix: fc.constantFrom("?", "?limit=1", ";x", "#x", "%00", "%20", "."),
});

/** A refusal: a 4xx with a JSON error (HEAD answers carry no body) and none of the stored data. */
function refusal(r: RawResponse): boolean {
  if (r.status < 400 || r.status >= 500 || r.text.includes("secret-plan")) return false;
  return r.method === "HEAD" || typeof (r.body as { error?: { code?: unknown } } | undefined)?.error?.code === "string";
}

async function fuzz(
  s: TestServer,
  headers: Record<string, string>,
  expected: (r: RawResponse) => boolean,
): Promise<void> {
  const targets = routeTargets(s);
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...targets),
      fc.array(edit, { minLength: 1, maxLength: 5 }),
      async (t: RouteTarget, edits: Edit[]) => {
        const path = edits.reduce(apply, t.path);
        const r = await rawRequest(s.url, {
          method: t.method,
          path,
          body: t.body,
          headers: { ...t.headers, ...headers },
        });
        if (!expected(r)) throw new Error(`${t.method} ${path} → ${r.status} ${r.text.slice(0, 120)}`);
      },
    ),
    { numRuns: RUNS },
  );
}

describe("chaos: path spellings against the real server", () => {
  let ts: TestStore;
  let withTokens: TestServer;
  let tokenless: TestServer;

  beforeAll(async () => {
    ts = await openSqliteTestStore();
    withTokens = await startServer(ts);
    tokenless = await startServer(ts, { env: { PMAGENT_TOKENS: "" } });
    expect(
      (
        await withTokens.call("POST", "/v1/entries", {
          body: { id: "secret-plan", to: "Builder", kind: "build_request" },
        })
      ).status,
    ).toBe(201);
  });
  afterAll(async () => {
    await withTokens.close();
    await tokenless.close();
    await ts.cleanup();
  });

  it("no spelling of any route answers without a token", async () => {
    await fuzz(withTokens, {}, refusal);
  });

  it("no spelling of any route answers a foreign Host on a token-less server", async () => {
    const port = new URL(tokenless.url).port;
    await fuzz(tokenless, { host: `rebound.evil.example:${port}` }, refusal);
  });

  it("no spelling of any route answers a cookie sent from another origin", async () => {
    await fuzz(withTokens, { cookie: `pmagent_token=${TOKENS.Human}`, origin: "http://evil.example" }, refusal);
  });
});
