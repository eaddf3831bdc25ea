import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { RunStore, resumePath } from "../../../src/lattice/index.js";
import { projectSupervisor } from "../../../src/app/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { CLI } from "../../helpers/proc.js";
import { PMAGENT, testProject } from "../helpers.js";

const kinds = await availableStoreKinds();
// Not token-shaped, so only the exact-value layer of the redactor can catch it.
const SECRET = "restart-survivor-secret-6e1f0c93";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every row of every table of the test's database, as text (the PostgreSQL side of "the database file"). */
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

describe.each(kinds)("secrets of a resumed run after a supervisor restart, on $name", (kind) => {
  it(
    "a re-attached sprite that prints its fetched credential gets it redacted: not in the database nor the logs",
    { timeout: 120_000 },
    async () => {
      const ts = await kind.open();
      const tp = testProject(ts, {
        // Re-attaching needs a sprite that outlives its supervisor; a sandboxed one dies with it (bwrap --die-with-parent).
        sandbox: "off",
        secrets: { file: "secrets.json" },
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
        const go = join(tp.root, "go");
        const command = tp.sprite("fetch", {
          steps: [
            { emit: "PHASE_STARTED", payload: { phase: "deploy" } },
            {
              emit: "ACTION_REQUEST",
              payload: { action: "FETCH_CREDENTIAL", parameters: { name: "DEPLOY_TOKEN" }, blocking: true },
            },
            { waiting: { reason: "credential", expected_inputs: { name: "string", value: "string" } } },
          ],
          // Resumed (its INFO carries the inputs, the secret among them), it waits for the restart, then prints the secret everywhere.
          on_resume: [
            { sh: `while [ ! -f '${go}' ]; do sleep 0.05; done` },
            { log: `stdout: the token is ${SECRET}` },
            { stderr: `stderr: the token is ${SECRET}` },
            { emit: "INFO", payload: { message: `event: the token is ${SECRET}` } },
            { emit: "COMPLETED", payload: { status: "success", summary: `deployed with ${SECRET}` } },
          ],
        });
        // The first supervisor: `pmagent run`, which carries out FETCH_CREDENTIAL and resumes the sprite.
        const env: NodeJS.ProcessEnv = { ...process.env, ...ts.env, PMAGENT_LOG_LEVEL: "debug" };
        delete env.DEPLOY_TOKEN;
        const child = spawn(process.execPath, [CLI, "run", "--role", "Builder", "--", ...command], {
          cwd: tp.root,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let childOut = "";
        child.stdout.on("data", (d: Buffer) => (childOut += d.toString()));
        child.stderr.on("data", (d: Buffer) => (childOut += d.toString()));
        const exited = new Promise<void>((r) => child.once("exit", () => r()));
        let ended = false;
        void exited.then(() => (ended = true));
        const runs = new RunStore(ts.store, "demo");
        // Kill it once the resumed attempt runs (the sprite then waits for `go`).
        for (;;) {
          const run = (await runs.list())[0];
          if (run && run.attempt === 2 && run.state === "running") break;
          if (ended) throw new Error(`pmagent run ended before the sprite was resumed: ${childOut}`);
          await sleep(20);
        }
        child.kill("SIGKILL");
        await exited;

        // The restart: a new supervisor (this process, no FETCH_CREDENTIAL seen) re-attaches to the sprite.
        const logFile = join(tp.root, "..", `${tp.root.split("/").pop()}-restart.log`);
        const sup = projectSupervisor({
          store: ts.store,
          project: tp.project,
          env: { PATH: process.env.PATH, HOME: process.env.HOME },
          logger: pino({ level: "debug" }, pino.destination({ dest: logFile, sync: true })),
          pmagentCommand: PMAGENT,
          pollMs: 20,
        });
        const reconciled = sup.reconcile();
        writeFileSync(go, "");
        const [run] = await reconciled;
        expect(run?.state, run?.reason ?? "").toBe("succeeded");

        // The output after the restart was stored, redacted.
        const logs = (await runs.logs(run!.id)).map((l) => l.text);
        expect(logs).toContain("stdout: the token is [REDACTED]");
        expect(logs).toContain("stderr: the token is [REDACTED]");
        const infos = (await runs.events(run!.id, { type: "INFO" })).map((e) => JSON.stringify(e.event.payload));
        expect(infos.some((p) => p.includes("event: the token is [REDACTED]"))).toBe(true);

        const db = await databaseText(ts);
        expect(db).toContain("[REDACTED]");
        expect(db.includes(SECRET)).toBe(false);
        if (ts.file)
          for (const f of [ts.file, `${ts.file}-wal`])
            if (existsSync(f)) expect(readFileSync(f).includes(SECRET), f).toBe(false);
        expect(childOut.includes(SECRET)).toBe(false);
        expect(readFileSync(logFile, "utf8").includes(SECRET)).toBe(false);
        for (const f of readdirSync(run!.run_dir).filter((n) => n.endsWith(".log")))
          expect(readFileSync(join(run!.run_dir, f)).includes(SECRET), f).toBe(false);
        // The re-attached supervisor never saw the resume, but the role fetches credentials: resume.json is not left behind.
        expect(existsSync(resumePath(run!.workspace))).toBe(false);
      } finally {
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );
});
