/**
 * Config reload in a running server (POST /v1/config/reload): a role added to pmagent.config.json
 * after start is listed and served; a config that does not parse, or that changes what the server
 * reads only at start, is refused with its reason and the config in use kept.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { startServer, type TestServer } from "./helpers.js";

describe("POST /v1/config/reload", () => {
  let ts: TestStore;
  let s: TestServer;
  beforeEach(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts, { config: { oa: { gate: false } } });
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
  });

  const roles = async () =>
    ((await s.call("GET", "/v1/whoami")).body.lanes as Array<{ roles: string[] }>).flatMap((l) => l.roles);
  const edit = (change: (config: { lanes: Array<{ roles: unknown[] }> }) => void) => {
    const config = JSON.parse(readFileSync(s.tp.project.configPath, "utf8")) as { lanes: Array<{ roles: unknown[] }> };
    change(config);
    writeFileSync(s.tp.project.configPath, JSON.stringify(config, null, 2));
  };

  it("a role added after start is listed and a worker can serve it; unchanged, it says so", async () => {
    expect(await roles()).toEqual(["Builder", "Reviewer"]);
    const before = await s.call("POST", "/v1/workers", { body: { role: "Writer" } });
    expect([before.status, before.body.error.code]).toEqual([400, "unknown_role"]);
    edit((c) =>
      c.lanes[0]!.roles.push({ name: "Writer", allowed_kinds: ["write_request"], runner: { command: ["true"] } }),
    );
    const reloaded = await s.call("POST", "/v1/config/reload");
    expect(reloaded.status, JSON.stringify(reloaded.body)).toBe(200);
    expect(reloaded.body).toEqual({
      config_path: s.tp.project.configPath,
      changed: true,
      lanes: [{ layer: "test", name: "build", roles: ["Builder", "Reviewer", "Writer"] }],
    });
    expect(await roles()).toEqual(["Builder", "Reviewer", "Writer"]);
    const worker = await s.call("POST", "/v1/workers", { body: { role: "Writer" } });
    expect([worker.status, worker.body.role]).toEqual([201, "Writer"]);
    expect((await s.call("POST", "/v1/config/reload")).body.changed).toBe(false);
  });

  it("a broken config, or one that changes what is read at start, is refused and the config in use kept; only a human reloads", async () => {
    writeFileSync(s.tp.project.configPath, "{ not json");
    const broken = await s.call("POST", "/v1/config/reload");
    expect([broken.status, broken.body.error.code]).toEqual([400, "config_invalid_json"]);
    expect(broken.body.error.message).toMatch(/pmagent\.config\.json/);
    expect(broken.body.error.message).toMatch(/\nThe config in use is unchanged: fix the file and reload again\.$/);
    writeFileSync(
      s.tp.project.configPath,
      JSON.stringify({
        project_id: "demo",
        lanes: [{ layer: "test", name: "build", roles: [{ name: "Builder", allowed_kinds: [] }] }],
      }),
    );
    const invalid = await s.call("POST", "/v1/config/reload");
    expect([invalid.status, invalid.body.error.code]).toEqual([400, "config_invalid"]);
    expect(invalid.body.error.message).toMatch(/allowed_kinds/);
    expect(await roles()).toEqual(["Builder", "Reviewer"]);

    writeFileSync(
      s.tp.project.configPath,
      JSON.stringify({
        project_id: "other",
        humans: ["Boss"],
        oa: { gate: false },
        lanes: [{ layer: "test", name: "build", roles: [{ name: "Builder", allowed_kinds: ["build_request"] }] }],
      }),
    );
    const restart = await s.call("POST", "/v1/config/reload");
    expect([restart.status, restart.body.error.code, restart.body.error.message]).toEqual([
      409,
      "config_needs_restart",
      `${s.tp.project.configPath} changes project_id, humans, which pmagent serve reads only at start: restart it to apply them (the config in use is unchanged)`,
    ]);
    expect(await roles()).toEqual(["Builder", "Reviewer"]);
    const robot = await s.call("POST", "/v1/config/reload", { as: "Builder" });
    expect([robot.status, robot.body.error.message]).toEqual([
      403,
      "Builder may not reload the config: only a human (Human) may",
    ]);
  });
});
