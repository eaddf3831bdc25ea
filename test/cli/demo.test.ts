import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { SqliteStore } from "../../src/store/index.js";
import { runCli } from "../helpers/proc.js";

describe("pmagent demo", () => {
  it("runs the doc_update lane once on a temporary SQLite project and leaves it to look at", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "pmagent-demo-test-")), "demo");
    const r = await runCli(["demo", "--dir", dir], { env: { ...process.env, PMAGENT_DATABASE_URL: "postgres://ignored@127.0.0.1:1/x" } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`store: ${join(dir, ".pmagent/pmagent.db")}`);
    expect(r.stdout).toContain("lane layer_b/doc_update: Human → Aya → Sho → Tsugu → Gen → Hana");
    for (const role of ["Aya", "Sho", "Tsugu", "Gen", "Hana"]) expect(r.stdout).toMatch(new RegExp(`${role} +claims`));
    expect(r.stdout).toContain("5 entries, 5 done.");

    const store = new SqliteStore(join(dir, ".pmagent/pmagent.db"));
    const board = new Blackboard(store, { projectId: "demo", humans: ["Human"] });
    const entries = await board.list();
    expect(entries.map((e) => [e.entry.id, e.entry.from, e.entry.to, e.entry.status])).toEqual([
      ["demo-docupdate-1", "Human", "Aya", "done"],
      ["demo-docupdate-1-review", "Aya", "Sho", "done"],
      ["demo-docupdate-1-apply", "Sho", "Tsugu", "done"],
      ["demo-docupdate-1-pm_snapshot", "Tsugu", "Gen", "done"],
      ["demo-docupdate-1-done", "Gen", "Hana", "done"],
    ]);
    expect((await board.history("demo-docupdate-1")).map((h) => h.action)).toEqual(["post", "claim", "status"]);
    await store.close();
  });
});
