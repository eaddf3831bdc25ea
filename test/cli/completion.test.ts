import { describe, expect, it, beforeAll } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { groups } from "../../src/cli/program.js";
import { spawnSync } from "node:child_process";
import { runCli } from "../helpers/proc.js";

const has = (shell: string) => spawnSync("sh", ["-c", `command -v ${shell}`]).status === 0;

describe("pmagent completion bash|zsh|fish", () => {
  let bashScript: string;

  beforeAll(async () => {
    const r = await runCli(["completion", "bash"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    bashScript = join(mkdtempSync(join(tmpdir(), "pmagent-completion-")), "pmagent.bash");
    writeFileSync(bashScript, r.stdout);
  });

  /** What bash's completion function offers for the words typed so far (the last one being completed). */
  const complete = async (...words: string[]): Promise<string[]> => {
    const r = spawnSync("bash", [
      "-c",
      'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _pmagent; printf "%s\\n" "${COMPREPLY[@]}"',
      bashScript,
      ...words,
    ], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    return r.stdout.split("\n").filter((l) => l !== "");
  };

  it("bash completes commands, subcommands, options and option values from the program tree", async () => {
    expect(await complete("pmagent", "bb", "p")).toEqual(["post"]);
    expect((await complete("pmagent", "")).sort()).toEqual(Object.keys(groups).sort());
    expect(await complete("pmagent", "runs", "l")).toEqual(["list", "logs"]);
    expect(await complete("pmagent", "bb", "list", "--st")).toEqual(["--status"]);
    expect(await complete("pmagent", "bb", "list", "--status", "")).toEqual(["open", "in_progress", "done", "error", "canceled"]);
    expect(await complete("pmagent", "kai", "status", "--format", "")).toEqual(["text", "json", "md"]);
    expect(await complete("pmagent", "completion", "")).toEqual(["bash", "zsh", "fish"]);
  });

  it("bash skips global options and option values when finding the command", async () => {
    expect(await complete("pmagent", "--config", "bb", "bb", "l")).toEqual(["list"]);
    expect(await complete("pmagent", "worker", "--role", "bb", "--o")).toEqual(["--once"]);
    // After `--` come a sprite's own arguments: nothing of pmagent's is offered.
    expect(await complete("pmagent", "run", "--role", "Builder", "--", "")).toEqual([]);
  });

  it("zsh and fish scripts name every command; each parses in its shell where installed", async () => {
    for (const shell of ["zsh", "fish"]) {
      const r = await runCli(["completion", shell]);
      expect(r.code).toBe(0);
      for (const name of Object.keys(groups)) expect(r.stdout, `${shell}: ${name}`).toContain(shell === "zsh" ? `'${name}:` : `-a '${name}'`);
      if (has(shell)) {
        const file = join(mkdtempSync(join(tmpdir(), "pmagent-completion-")), `pmagent.${shell}`);
        writeFileSync(file, r.stdout);
        expect(spawnSync(shell, ["-n", file]).status, `${shell} -n`).toBe(0);
      }
    }
  });

  it("an unknown shell is a usage error naming the shells", async () => {
    const r = await runCli(["completion", "powershell"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.");
  });
});
