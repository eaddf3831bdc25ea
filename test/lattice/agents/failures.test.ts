/**
 * Agents that fail fast and say why, through the real CLIs against local servers answering in each
 * API's streaming format: an unreachable endpoint, HTTP 401, HTTP 500, a stalled stream and a
 * malformed stream each end the run by itself, failed, with the agent's own reason (the watchdog's
 * for the stall, naming the agent's last message). No timers: each test waits on the run's end.
 */
import { describe, expect, it } from "vitest";
import { createServer } from "node:net";
import { availableStoreKinds } from "../../helpers/stores.js";
import { startFakeAnthropic } from "../../helpers/fake-anthropic.js";
import { startFakeGemini } from "../../helpers/fake-gemini.js";
import { startFakeOpenAI } from "../../helpers/fake-openai.js";
import { agentProject } from "./helpers.js";

// How an agent run ends does not depend on the store: SQLite only.
const sqlite = (await availableStoreKinds()).find((k) => k.name === "sqlite")!;

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

type Mode = "unreachable" | "401" | "500" | "stall" | "malformed";
interface Fake {
  baseURL: string;
  close(): Promise<void>;
}

/** Per agent: its fake server scripted for a mode (each reply queued thrice: the agent retries once). */
const agents = {
  codex: {
    key: "OPENAI_API_KEY",
    async start(mode: Mode): Promise<Fake> {
      const f = await startFakeOpenAI();
      const reply =
        mode === "401"
          ? { status: 401, message: "Incorrect API key provided: fake" }
          : mode === "500"
            ? { status: 500, message: "the fake model server broke" }
            : mode === "stall"
              ? { text: "Hello there", stall: true }
              : { malformed: true as const };
      f.reply(reply, reply, reply);
      return f;
    },
  },
  claude: {
    key: "ANTHROPIC_API_KEY",
    async start(mode: Mode): Promise<Fake> {
      const f = await startFakeAnthropic();
      const reply =
        mode === "401"
          ? { status: 401, message: "invalid x-api-key: fake" }
          : mode === "500"
            ? { status: 500, message: "the fake model server broke" }
            : mode === "stall"
              ? { stall: true as const }
              : { malformed: true as const };
      f.reply(reply, reply, reply);
      return f;
    },
  },
  gemini: {
    key: "GEMINI_API_KEY",
    async start(mode: Mode): Promise<Fake> {
      const f = await startFakeGemini();
      const reply =
        mode === "401"
          ? { status: 401, message: "API key not valid: fake" }
          : mode === "500"
            ? { status: 500, message: "the fake model server broke" }
            : mode === "stall"
              ? { text: "Hello there", stall: true as const }
              : { malformed: true as const };
      f.reply(reply, reply, reply);
      return f;
    },
  },
} as const;

/** What the run's reason says, per agent and mode: the agent's own words. */
const reasons: Record<keyof typeof agents, Record<Exclude<Mode, "stall">, RegExp>> = {
  codex: {
    unreachable: /^ERROR: Connection failed: error sending request/,
    "401": /^ERROR: unexpected status 401 Unauthorized: Incorrect API key provided: fake/,
    "500":
      /^ERROR: We’re currently experiencing high demand.*\(Codex's text for an HTTP 500 or an overloaded server; it does not pass the server's own message on\)$/,
    malformed: /^ERROR: stream disconnected before completion/,
  },
  claude: {
    unreachable: /^ERROR: API Error: Unable to connect to API \(ConnectionRefused\)/,
    "401": /^ERROR: Invalid API key/,
    "500": /^ERROR: API Error: 500 the fake model server broke/,
    malformed: /^ERROR: API Error: API returned an empty or malformed response/,
  },
  gemini: {
    unreachable: /^ERROR: \[API Error: .*fetch failed/,
    "401": /^ERROR: \[API Error: .*API key not valid: fake/,
    "500": /^ERROR: \[API Error: .*the fake model server broke/,
    malformed: /^ERROR: \[API Error: .*JSON/,
  },
};

const IDLE_S = 10;
/**
 * The stall test's watchdog: the agent's boot counts against it, and Gemini CLI (a large JavaScript
 * bundle) once took over 10 s to print its first line on a loaded CI machine, so the watchdog fired
 * before the stream had even started.
 */
const STALL_IDLE_S: Record<keyof typeof agents, number> = { codex: 10, claude: 10, gemini: 25 };

describe.each(Object.keys(agents) as Array<keyof typeof agents>)("%s fails fast and says why", (name) => {
  const agent = agents[name];
  it.each(["unreachable", "401", "500", "malformed"] as const)(
    "%s: the run fails by itself with the agent's own error",
    { timeout: 120_000 },
    async (mode) => {
      const ts = await sqlite.open();
      const fake = mode === "unreachable" ? null : await agent.start(mode);
      const baseURL =
        fake?.baseURL ??
        (name === "codex" ? `http://127.0.0.1:${await closedPort()}/v1` : `http://127.0.0.1:${await closedPort()}`);
      const tp = agentProject(ts, { agent: name, model: `${name}-test`, base_url: baseURL, idle_timeout_s: IDLE_S }, [
        agent.key,
      ]);
      try {
        const sup = tp.supervisor(undefined, { env: { ...process.env, [agent.key]: "failure-test-key" } });
        const run = await sup.startRun({ role: "Builder" });
        expect(run.state).toBe("failed");
        expect(run.reason).toMatch(reasons[name][mode]);
        expect(run.reason).not.toContain("runner.idle_timeout_s");
        const events = await sup.runs.events(run.id);
        expect(events.at(-1)?.event_type).toBe("ERROR");
        expect(events.some((e) => e.event_type === "COMPLETED")).toBe(false);
      } finally {
        await fake?.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "a stalled stream: the watchdog stops it and the reason names the agent's last message",
    { timeout: 120_000 },
    async () => {
      const ts = await sqlite.open();
      const fake = await agent.start("stall");
      const tp = agentProject(
        ts,
        { agent: name, model: `${name}-test`, base_url: fake.baseURL, idle_timeout_s: STALL_IDLE_S[name] },
        [agent.key],
      );
      try {
        const sup = tp.supervisor(undefined, { env: { ...process.env, [agent.key]: "failure-test-key" } });
        const run = await sup.startRun({ role: "Builder" });
        expect(run.state).toBe("failed");
        expect(run.reason).toMatch(
          new RegExp(
            `^no output and no event for ${STALL_IDLE_S[name]} s \\(runner\\.idle_timeout_s\\); the sprite was stopped; its last message: \\S`,
          ),
        );
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});
