/**
 * `pmagent serve` as a process: SIGHUP re-reads the config (a role added after start is listed; a
 * broken config is reported and the old one kept), and SIGTERM stops its hosted workers as
 * `pmagent worker` stops on SIGTERM (the run under way stopped, its entry left in progress).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WORKER_STOPPED } from "../../src/lattice/index.js";
import { CLI } from "../helpers/proc.js";
import { openSqliteTestStore } from "../helpers/stores.js";
import { eventually } from "./helpers.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

describe("pmagent serve: SIGHUP reloads the config, SIGTERM stops its workers", () => {
  const fx = useSupervisorFixture(openSqliteTestStore, { config: { oa: { gate: false } } });
  let child: ChildProcess | undefined;
  let stderr = "";
  const stderrWaiters: Array<() => void> = [];

  beforeEach(async () => {
    const slow = fx.tp.sprite("slow", { steps: [{ log: "working" }, { sleep: 60_000 }] });
    const config = JSON.parse(readFileSync(fx.tp.project.configPath, "utf8")) as {
      lanes: Array<{ roles: Array<Record<string, unknown>> }>;
    };
    config.lanes[0]!.roles[0]!.runner = { command: slow };
    writeFileSync(fx.tp.project.configPath, JSON.stringify(config));
  });
  afterEach(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
  });

  async function serve(): Promise<string> {
    stderr = "";
    child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
      cwd: fx.tp.root,
      env: { ...process.env, ...fx.ts.env },
    });
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      for (const wake of stderrWaiters.splice(0)) wake();
    });
    let out = "";
    return new Promise<string>((resolve, reject) => {
      child!.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child!.on("exit", (code) => reject(new Error(`exited ${code}: ${out} ${stderr}`)));
    });
  }
  const stderrHas = async (text: string) => {
    while (!stderr.includes(text)) await new Promise<void>((resolve) => stderrWaiters.push(resolve));
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect response bodies freely
  const json = async (url: string, init?: RequestInit) => (await (await fetch(url, init)).json()) as any;

  it("SIGHUP: a role added after start is listed; a broken config is reported and the old one kept", async () => {
    const url = await serve();
    const roles = async () =>
      ((await json(`${url}/v1/whoami`)).lanes as Array<{ roles: string[] }>).flatMap((l) => l.roles);
    expect(await roles()).toEqual(["Builder", "Reviewer"]);
    const config = JSON.parse(readFileSync(fx.tp.project.configPath, "utf8")) as { lanes: Array<{ roles: unknown[] }> };
    config.lanes[0]!.roles.push({ name: "Writer", allowed_kinds: ["write_request"] });
    writeFileSync(fx.tp.project.configPath, JSON.stringify(config));
    child!.kill("SIGHUP");
    await stderrHas("pmagent serve: config reloaded from");
    expect(stderr).toContain("roles Builder, Reviewer, Writer");
    expect(await roles()).toEqual(["Builder", "Reviewer", "Writer"]);
    writeFileSync(fx.tp.project.configPath, "{ broken");
    child!.kill("SIGHUP");
    await stderrHas("pmagent serve: config not reloaded:");
    expect(stderr).toMatch(/config not reloaded: .*pmagent\.config\.json/);
    expect(stderr).toContain("The config in use is unchanged: fix the file and reload again.");
    expect(await roles()).toEqual(["Builder", "Reviewer", "Writer"]);
    const code = await new Promise<number | null>((resolve) => {
      child!.on("exit", resolve);
      child!.kill("SIGTERM");
    });
    expect(code).toBe(0);
  });

  it("SIGTERM: the hosted worker's run under way is stopped and its entry left in progress; serve exits 0", async () => {
    const url = await serve();
    const post = (path: string, body: unknown) =>
      json(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const worker = await post("/v1/workers", { role: "Builder" });
    expect(worker).toMatchObject({ role: "Builder", state: "running" });
    await post("/v1/entries", { id: "e-1", to: "Builder", kind: "build_request" });
    const slot = await eventually(
      async () => (await json(`${url}/v1/workers`)).items[0].current[0],
      "the worker runs e-1",
    );
    await eventually(
      async () =>
        ((await json(`${url}/v1/runs/${slot.run_id}/logs`)) as Array<{ text: string }>).some(
          (l) => l.text === "working",
        ),
      "the sprite works",
    );
    const code = await new Promise<number | null>((resolve) => {
      child!.on("exit", resolve);
      child!.kill("SIGTERM");
    });
    expect(code).toBe(0);
    const sup = fx.tp.supervisor();
    const run = await sup.runs.get(slot.run_id);
    expect([run.state, run.reason]).toEqual(["canceled", WORKER_STOPPED]);
    expect((await sup.board.get("e-1")).entry.status).toBe("in_progress");
  });
});
