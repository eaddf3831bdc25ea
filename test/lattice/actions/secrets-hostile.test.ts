/**
 * A hostile sprite leaks a configured secret in every spelling it can write without effort: JSON
 * escapes in events (message, action parameters, environment proposal, COMPLETED summary → run
 * reason and entry note), percent-encoding, base64 (standard and URL-safe) and hex in its output.
 * Nothing pmagent keeps or shows may hold the secret in any of those spellings: the database,
 * the CLI, the API, the live stream, the supervisor's log, the webhook body.
 */
import { describe, expect, it } from "vitest";
import { createServer, type IncomingMessage } from "node:http";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { canonicalJson, contentHash } from "../../../src/core/index.js";
import { Blackboard } from "../../../src/blackboard/index.js";
import { RunStore, appendOutbox, outboxPath } from "../../../src/lattice/index.js";
import { buildServer } from "../../../src/server/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { runCli } from "../../helpers/proc.js";
import { readSse } from "../../server/helpers.js";
import { PMAGENT, testProject } from "../helpers.js";

const kinds = await availableStoreKinds();
// Not token-shaped: only the known-value layer of the redactor can catch it.
const SECRET = "Sx9-deploy/Key+42_q7";
const HUMAN_TOKEN = "human-token-hostile-0123456789";

const jsonEscaped = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
const percentAll = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
/** Every spelling that must not appear anywhere (the base64 forms: as the sprite writes them). */
const FORBIDDEN = [
  SECRET,
  jsonEscaped(SECRET),
  encodeURIComponent(SECRET),
  percentAll(SECRET),
  Buffer.from(SECRET).toString("base64"),
  Buffer.from(SECRET).toString("base64url"),
  Buffer.from(SECRET).toString("hex"),
];

function leaks(where: string, text: string): string[] {
  return FORBIDDEN.filter((f) => text.includes(f)).map((f) => `${where} holds ${JSON.stringify(f.slice(0, 24))}`);
}

/** Every row of every table of the test's database, as text. */
async function databaseText(ts: TestStore): Promise<string> {
  const tables = ts.file
    ? await ts.store.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
    : await ts.store.all<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`,
      );
  const parts: string[] = [];
  for (const { name } of tables) parts.push(JSON.stringify(await ts.store.all(`SELECT * FROM ${name}`)));
  return parts.join("\n");
}

/** A webhook on 127.0.0.1 that keeps every body it is sent. */
async function webhook(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      bodies.push(body);
      res.writeHead(200).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, bodies, close: () => new Promise((r) => server.close(() => r())) };
}

/** One event line as a hostile sprite writes it: the secret JSON-escaped inside `payload`'s strings. */
function line(type: string, payload: Record<string, unknown>, at: number): string {
  const json = JSON.stringify({
    protocol_version: "v1",
    event_type: type,
    sprite_id: "sprite-hostile",
    work_item_id: "e-1",
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString(),
    payload,
  });
  return json.split(SECRET).join(jsonEscaped(SECRET));
}

describe.each(kinds)("a hostile sprite leaking a secret in any spelling, on $name", (kind) => {
  it(
    "leaves it nowhere: database, CLI, API, MCP, live stream, log, webhook; the event id does not confirm it",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const hook = await webhook();
      const tp = testProject(ts, {
        secrets: { file: "secrets.json" },
        notify: { webhook_url: hook.url },
        lanes: [
          {
            layer: "test",
            name: "build",
            roles: [{ name: "Builder", allowed_kinds: ["build_request"], credentials: ["DEPLOY_TOKEN"] }],
          },
        ],
      });
      try {
        writeFileSync(join(tp.root, "secrets.json"), JSON.stringify({ DEPLOY_TOKEN: SECRET }));
        chmodSync(join(tp.root, "secrets.json"), 0o600);
        await new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] }).post("Human", {
          id: "e-1",
          to: "Builder",
          kind: "build_request",
        });
        const info = line("INFO", { message: `the key is ${SECRET}`, kind: "note", metadata: { [SECRET]: SECRET } }, 1);
        const events = [
          info,
          line(
            "ACTION_REQUEST",
            { action: "NOTIFY_USER", parameters: { message: `deploy key ${SECRET}`, title: SECRET }, blocking: false },
            2,
          ),
          line(
            "ENVIRONMENT_PROPOSAL",
            {
              observed_failure: { phase: "bootstrap", exit_code: 1, stderr_hint: `bad key ${SECRET}` },
              suggested_adjustment: { type: "env_var", details: { KEY: SECRET } },
              confidence: 0.5,
              evidence: [SECRET],
              scope: "repo_specific",
            },
            3,
          ),
          line("COMPLETED", { status: "failure", summary: `gave up with ${SECRET}` }, 4),
        ];
        const command = tp.sprite("hostile", {
          steps: [
            // Each event in the outbox and on stdout: the two copies must still be stored once.
            ...events.flatMap((e) => [{ raw_outbox: `${e}\n` }, { raw_stdout: `LATTICE_EVENT ${e}\n` }]),
            { log: `url ${encodeURIComponent(SECRET)} and ${percentAll(SECRET)}` },
            {
              log: `b64 ${Buffer.from(SECRET).toString("base64")} url-safe ${Buffer.from(`x:${SECRET}`).toString("base64url")}`,
            },
            { log: `hex ${Buffer.from(SECRET).toString("hex")} json ${jsonEscaped(SECRET)}` },
            { stderr: `stderr ${Buffer.from(SECRET).toString("base64")} ${jsonEscaped(SECRET)}` },
          ],
        });
        const env = { ...process.env, ...ts.env, PMAGENT_LOG_LEVEL: "debug" };
        const run = await runCli(["run", "--role", "Builder", "--entry", "e-1", "--", ...command], {
          cwd: tp.root,
          env,
        });
        const found: string[] = [...leaks("`pmagent run` output", run.stdout + run.stderr)];

        const runs = new RunStore(ts.store, "demo");
        const [rec] = await runs.list();
        expect(rec?.state, run.stderr).toBe("failed");
        expect(rec!.reason).toBe("COMPLETED with status failure: gave up with [REDACTED]");

        // Identity: the stored id is the hash of what is stored, not of what the sprite wrote.
        const stored = await runs.events(rec!.id, { type: "INFO" });
        expect(stored).toHaveLength(1);
        const raw = JSON.parse(info) as Record<string, unknown>;
        expect(stored[0]!.id).not.toBe(contentHash(raw));
        expect(stored[0]!.id).toBe(contentHash(JSON.parse(canonicalJson(stored[0]!.event))));
        expect(JSON.stringify(stored[0]!.event.payload)).toContain("[REDACTED]");

        // The webhook got the notification, redacted.
        expect(hook.bodies.length).toBeGreaterThan(0);
        for (const b of hook.bodies) found.push(...leaks("webhook body", b));

        found.push(...leaks("database", await databaseText(ts)));
        if (ts.file)
          for (const f of [ts.file, `${ts.file}-wal`])
            if (existsSync(f)) found.push(...leaks(f, readFileSync(f, "latin1")));

        for (const args of [
          ["runs", "show", rec!.id],
          ["runs", "events", rec!.id],
          ["runs", "logs", rec!.id],
          ["bb", "show", "e-1"],
          ["bb", "history", "e-1"],
        ]) {
          const out = await runCli(args, { cwd: tp.root, env });
          expect(out.code, out.stderr).toBe(0);
          found.push(...leaks(`pmagent ${args.join(" ")}`, out.stdout + out.stderr));
        }

        const server = await buildServer({
          project: tp.project,
          store: ts.store,
          port: 0,
          env: { PMAGENT_TOKENS: `${HUMAN_TOKEN}=Human` },
          supervisor: { pmagentCommand: PMAGENT, pollMs: 20 },
        });
        const url = await server.listen();
        try {
          const headers = { authorization: `Bearer ${HUMAN_TOKEN}` };
          for (const path of [
            `/v1/runs/${rec!.id}`,
            `/v1/runs/${rec!.id}/events`,
            `/v1/runs/${rec!.id}/logs`,
            "/v1/entries/e-1",
            "/v1/entries/e-1/history",
            "/v1/actions",
            "/v1/env/proposals",
          ]) {
            const res = await fetch(`${url}${path}`, { headers });
            expect(res.status, path).toBe(200);
            found.push(...leaks(`GET ${path}`, await res.text()));
          }
          const mcp = new Client({ name: "pmagent-test", version: "1.0.0" });
          await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
          try {
            const reads = [
              ["runs_show", { id: rec!.id, detail: "full" }],
              ["runs_events", { id: rec!.id, detail: "full" }],
              ["runs_logs", { id: rec!.id }],
              ["bb_show", { id: "e-1" }],
              ["bb_history", { id: "e-1", detail: "full" }],
              ["bb_list", {}],
            ] as const;
            for (const [name, args] of reads) {
              const result = await mcp.callTool({ name, arguments: args });
              expect(result.isError, JSON.stringify(result)).toBeFalsy();
              found.push(...leaks(`MCP ${name}`, JSON.stringify(result)));
            }
            for (const uri of [
              `pmagent://runs/${rec!.id}`,
              `pmagent://runs/${rec!.id}/events`,
              `pmagent://runs/${rec!.id}/logs`,
            ])
              found.push(...leaks(`MCP resource ${uri}`, JSON.stringify(await mcp.readResource({ uri }))));
          } finally {
            await mcp.close();
          }
          const frames = await readSse(`${url}/v1/runs/${rec!.id}/events/stream`, headers, (f) =>
            f.some((x) => x.event === "end"),
          );
          found.push(...leaks("the live stream", JSON.stringify(frames)));
        } finally {
          await server.close();
        }
        expect(found).toEqual([]);
      } finally {
        await hook.close();
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );

  it(
    "stops a run whose role fetches credentials when the secrets file no longer parses, with a clear error",
    { timeout: 60_000 },
    async () => {
      const ts = await kind.open();
      const tp = testProject(ts, {
        secrets: { file: "secrets.json" },
        lanes: [
          {
            layer: "test",
            name: "build",
            roles: [
              { name: "Builder", allowed_kinds: ["build_request"], credentials: ["DEPLOY_TOKEN"] },
              { name: "Plain", allowed_kinds: ["x"] },
            ],
          },
        ],
      });
      try {
        // What a sprite appending events to it leaves behind.
        writeFileSync(join(tp.root, "secrets.json"), `{"DEPLOY_TOKEN": "${SECRET}"}\n{"protocol_version":"v1"}\n`);
        const sup = tp.supervisor();
        const command = tp.sprite("plain", {
          steps: [{ log: `leak ${SECRET}` }, { emit: "COMPLETED", payload: { status: "success" } }],
        });
        const run = await sup.startRun({ role: "Builder", command });
        expect(run.state).toBe("failed");
        expect(run.reason).toBe(
          `secrets file ${join(tp.root, "secrets.json")} is not valid JSON: expected an object of name → string value; run ${run.id} of role Builder is stopped: its role may fetch credentials, and its output cannot be redacted without their values. Fix the secrets file, then start the run again`,
        );
        expect(run.sprite_pid).toBeNull();
        expect((await sup.runs.logs(run.id)).map((l) => l.text).join("\n")).not.toContain("leak");
        // A role that fetches no credential is not held up by it.
        const plain = await sup.startRun({ role: "Plain", command });
        expect(plain.state).toBe("succeeded");
      } finally {
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );
});

describe("an outbox pointed at the secrets file", () => {
  it("is never appended to by pmagent's outbox writer (pmagent emit, the sprite library): the secrets file keeps parsing", () => {
    const root = mkdtempSync(join(tmpdir(), "pmagent-outbox-link-"));
    try {
      const secrets = join(root, "secrets.json");
      writeFileSync(secrets, JSON.stringify({ DEPLOY_TOKEN: SECRET }));
      const ws = join(root, "ws");
      mkdirSync(join(ws, ".lattice"), { recursive: true });
      symlinkSync(secrets, outboxPath(ws));
      expect(() => appendOutbox(outboxPath(ws), { event_type: "INFO" })).toThrow(
        `the outbox ${outboxPath(ws)} is a symbolic link: it must be a plain file in the workspace; nothing was written`,
      );
      expect(JSON.parse(readFileSync(secrets, "utf8"))).toEqual({ DEPLOY_TOKEN: SECRET });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
