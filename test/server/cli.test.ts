import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, runCli } from "../helpers/proc.js";

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

  it("serves until SIGTERM, then exits 0", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], { cwd: dir, env: env() });
    let out = "";
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const who = (await (await fetch(`${url}/v1/whoami`)).json()) as { actor: string };
    expect(who.actor).toBe("Human");
    expect((await fetch(`${url}/`)).headers.get("content-type")).toBe("text/html; charset=utf-8");
    // An encoded ../ stays inside the console directory.
    const escape = await fetch(`${url}/console/..%2f..%2f..%2fpackage.json`);
    expect([403, 404]).toContain(escape.status);
    expect(await escape.text()).not.toContain("\"dependencies\"");
    const code = await new Promise<number | null>((resolve) => {
      child.on("exit", resolve);
      child.kill("SIGTERM");
    });
    expect(code).toBe(0);
  });
});
