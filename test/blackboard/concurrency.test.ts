import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Blackboard } from "../../src/blackboard/index.js";
import { PostgresStore, type Store } from "../../src/store/index.js";
import { TSX_IMPORT } from "../helpers/proc.js";
import { availableStoreKinds } from "../helpers/stores.js";
import { claimLoop } from "./claim-loop.js";

const kinds = await availableStoreKinds();
const CLAIMER = fileURLToPath(new URL("./claimer.ts", import.meta.url));
const ENTRIES = 1000;
const CLAIMERS = 32;

function startClaimer(env: Record<string, string>): {
  done: Promise<{ worker: string; done?: string[]; held?: string[] }>;
  kill(): void;
  firstLine: Promise<string>;
} {
  const child = spawn(process.execPath, ["--import", TSX_IMPORT, CLAIMER], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  let resolveLine!: (l: string) => void;
  const firstLine = new Promise<string>((r) => (resolveLine = r));
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    if (out.includes("\n")) resolveLine(out.split("\n")[0]!);
  });
  const done = new Promise<{ worker: string; done?: string[] }>((resolve, reject) =>
    child.on("close", (code, signal) =>
      code === 0
        ? resolve(JSON.parse(out.trim()))
        : signal
          ? resolve({ worker: env.WORKER! })
          : reject(new Error(`claimer exited ${code}`)),
    ),
  );
  return { done, kill: () => child.kill("SIGKILL"), firstLine };
}

/** The claimer loop of claimer.ts on its own PostgreSQL connection, in this process. */
async function claimInProcess(
  dbEnv: Record<string, string>,
  worker: string,
  finishAndClaim: boolean,
): Promise<{ worker: string; done: string[] }> {
  const store = await PostgresStore.connect(dbEnv.PG_URL!, { schema: dbEnv.PG_SCHEMA, max: 1 });
  const board = new Blackboard(store, { projectId: "vpm-mini", humans: ["Human"], leaseMs: 20_000 });
  try {
    return { worker, done: await claimLoop(board, store, worker, finishAndClaim) };
  } finally {
    await store.close();
  }
}

async function seed(store: Store): Promise<void> {
  const board = new Blackboard(store, { projectId: "vpm-mini", humans: ["Human"] });
  const base = Date.parse("2026-01-01T00:00:00Z");
  for (let i = 0; i < ENTRIES; i++) {
    await board.put("Human", {
      id: `c-${String(i).padStart(4, "0")}`,
      from: "Human",
      to: "Aya",
      project_id: "vpm-mini",
      kind: "doc_update_proposal_request",
      status: "open",
      payload: { summary: `entry ${i}` },
      target_docs: [],
      created_at: new Date(base + i).toISOString(),
      updated_at: new Date(base + i).toISOString(),
    });
  }
}

describe.each(kinds)("32 concurrent claimers over 1,000 entries ($name)", (kind) => {
  it.each([
    ["claim, then transition", false],
    ["finishAndClaim", true],
  ])(
    "%s: claim every entry exactly once, and take over a killed claimer's entries after its lease",
    { timeout: 240_000 },
    async (_name, finishAndClaim) => {
      const t = await kind.open();
      try {
        await seed(t.store);
        const dbEnv: Record<string, string> = t.file
          ? { SQLITE_FILE: t.file }
          : { PG_URL: t.env.PMAGENT_DATABASE_URL!, PG_SCHEMA: t.env.PMAGENT_DATABASE_SCHEMA! };
        const crasher = startClaimer({ ...dbEnv, WORKER: "crasher", HOLD: "1", MAX: "5", LEASE_MS: "3000" });
        const held = (JSON.parse(await crasher.firstLine) as { held: string[] }).held;
        expect(held).toHaveLength(5);
        crasher.kill();
        await crasher.done;

        // SQLite: separate processes (one connection each); PostgreSQL: separate connections.
        const results = t.file
          ? await Promise.all(
              Array.from(
                { length: CLAIMERS },
                (_, i) =>
                  startClaimer({
                    ...dbEnv,
                    WORKER: `w${i}`,
                    LEASE_MS: "20000",
                    FINISH_AND_CLAIM: finishAndClaim ? "1" : "0",
                  }).done,
              ),
            )
          : await Promise.all(
              Array.from({ length: CLAIMERS }, (_, i) => claimInProcess(dbEnv, `w${i}`, finishAndClaim)),
            );
        const all = results.flatMap((r) => r.done ?? []);
        expect(all).toHaveLength(ENTRIES);
        expect(new Set(all).size).toBe(ENTRIES);
        // The work was shared, not done by one process.
        expect(results.filter((r) => (r.done ?? []).length > 0).length).toBeGreaterThan(1);

        const rows = await t.store.all<{ entry_id: string; action: string; actor: string; changes_json: string }>(
          "SELECT entry_id, action, actor, changes_json FROM bb_history WHERE action IN ('claim', 'takeover', 'status') ORDER BY seq",
        );
        const per = new Map<string, string[]>();
        for (const r of rows) per.set(r.entry_id, [...(per.get(r.entry_id) ?? []), r.action]);
        for (const [id, actions] of per) {
          expect(actions[0], id).toBe("claim");
          expect(actions.at(-1), id).toBe("status");
          expect(
            actions.filter((a) => a === "status"),
            id,
          ).toHaveLength(1);
          if (held.includes(id)) expect(actions, id).toContain("takeover");
        }
        expect(per.size).toBe(ENTRIES);
        const left = await t.store.get<{ n: number }>(
          "SELECT COUNT(*) AS n FROM bb_entries WHERE status <> 'done' OR claimed_by IS NOT NULL",
        );
        expect(Number(left?.n)).toBe(0);
      } finally {
        await t.cleanup();
      }
    },
  );
});
