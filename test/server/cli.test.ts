import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli, serveCli } from "../helpers/proc.js";
import { holdWriteLock } from "../helpers/sqlite-lock.js";

describe("pmagent serve and pmagent mcp (CLI)", () => {
  let dir: string;
  const env = () => ({ PATH: process.env.PATH!, HOME: dir });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "pmagent-serve-cli-"));
    expect((await runCli(["init", "--project-id", "demo"], { cwd: dir, env: env() })).code).toBe(0);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reports bad flags and refuses a non-loopback host without tokens", async () => {
    const port = await runCli(["serve", "--port", "abc"], { cwd: dir, env: env() });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port expects a whole number, got "abc"');
    const open = await runCli(["serve", "--host", "0.0.0.0"], { cwd: dir, env: env() });
    expect(open.code).toBe(1);
    expect(open.stderr).toContain("refusing to listen on 0.0.0.0 without bearer tokens");
    const tokens = await runCli(["serve"], { cwd: dir, env: { ...env(), PMAGENT_TOKENS: "not-a-pair" } });
    expect(tokens.code).toBe(2);
    expect(tokens.stderr).toContain("PMAGENT_TOKENS: each item must be TOKEN=Actor (item 1 is not) [invalid_tokens]");
    expect(tokens.stderr).not.toContain("not-a-pair");
    const as = await runCli(["mcp", "--as", ""], { cwd: dir, env: env() });
    expect(as.code).toBe(2);
    expect(as.stderr).toContain("--as needs an actor name");
  });

  const serve = () => serveCli({ cwd: dir, env: env() });

  it("serves until SIGTERM, then exits 0", async () => {
    const { stop, url } = await serve();
    const who = (await (await fetch(`${url}/v1/whoami`)).json()) as { actor: string };
    expect(who.actor).toBe("Human");
    expect((await fetch(`${url}/`)).headers.get("content-type")).toBe("text/html; charset=utf-8");
    // An encoded ../ stays inside the console directory.
    const escape = await fetch(`${url}/console/..%2f..%2f..%2fpackage.json`);
    expect([403, 404]).toContain(escape.status);
    expect(await escape.text()).not.toContain('"dependencies"');
    expect(await stop()).toBe(0);
  });

  it("answers reads while another process holds the SQLite write lock, and a write 503 store_busy", async () => {
    const { stop, url } = await serve();
    const lock = await holdWriteLock(join(dir, ".pmagent/pmagent.db"));
    try {
      let written = false;
      const write = fetch(`${url}/v1/entries`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ to: "Aya", kind: "doc_update_proposal_request" }),
      }).finally(() => (written = true));
      // Reads one after another, all answered while the write still waits for the lock.
      for (let i = 0; i < 3; i++) expect((await fetch(`${url}/v1/entries`)).status).toBe(200);
      expect(written).toBe(false);
      const refused = await write;
      expect([
        refused.status,
        refused.headers.get("retry-after"),
        ((await refused.json()) as { error: { code: string } }).error.code,
      ]).toEqual([503, "1", "store_busy"]);
    } finally {
      await lock.release();
      await stop();
    }
  });
});
