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
    const r = spawnSync(
      "bash",
      [
        "-c",
        'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _pmagent; printf "%s\\n" "${COMPREPLY[@]}"',
        bashScript,
        ...words,
      ],
      { encoding: "utf8" },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    return r.stdout.split("\n").filter((l) => l !== "");
  };

  it("bash completes commands, subcommands, options and option values from the program tree", async () => {
    expect(await complete("pmagent", "bb", "p")).toEqual(["post"]);
    expect((await complete("pmagent", "")).sort()).toEqual(Object.keys(groups).sort());
    expect(await complete("pmagent", "runs", "l")).toEqual(["list", "logs"]);
    expect(await complete("pmagent", "bb", "list", "--st")).toEqual(["--status"]);
    expect(await complete("pmagent", "bb", "list", "--status", "")).toEqual([
      "open",
      "in_progress",
      "done",
      "error",
      "canceled",
    ]);
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
      for (const name of Object.keys(groups))
        expect(r.stdout, `${shell}: ${name}`).toContain(shell === "zsh" ? `'${name}:` : `-a '${name}'`);
      if (has(shell)) {
        const file = join(mkdtempSync(join(tmpdir(), "pmagent-completion-")), `pmagent.${shell}`);
        writeFileSync(file, r.stdout);
        expect(spawnSync(shell, ["-n", file]).status, `${shell} -n`).toBe(0);
      }
    }
  });

  /** The generated script written to a file. */
  const script = async (shell: string): Promise<string> => {
    const file = join(mkdtempSync(join(tmpdir(), "pmagent-completion-")), `pmagent.${shell}`);
    writeFileSync(file, (await runCli(["completion", shell])).stdout);
    return file;
  };

  it.skipIf(!has("zsh"))(
    "zsh offers the same words (its completion widgets stubbed to print what they are given)",
    async () => {
      const stubs =
        'compdef(){}; _describe(){ print -l -- ${(P)2} }; compadd(){ print -l -- ${(P)2} }; _files(){ print FILES }; source "$0"';
      const file = await script("zsh");
      const run = (words: string[], prefix = "") => {
        const r = spawnSync(
          "zsh",
          ["-c", `${stubs}; words=("$@"); CURRENT=$#words; PREFIX=${JSON.stringify(prefix)}; _pmagent`, file, ...words],
          { encoding: "utf8" },
        );
        expect(r.stderr).toBe("");
        return r.stdout
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => l.split(":")[0]);
      };
      expect(run(["pmagent", "bb", "p"], "p")).toContain("post");
      expect(run(["pmagent", "bb", "list", "--status", ""])).toEqual([
        "open",
        "in_progress",
        "done",
        "error",
        "canceled",
      ]);
      expect(run(["pmagent", "--config", "x", "bb", "list", "--f"], "--f")).toContain("--format");
      expect(run(["pmagent", "run", "--role", "A", "--", "x"], "x")).toEqual(["FILES"]);
    },
  );

  it.skipIf(!has("fish"))("fish completes `pmagent bb p` to post, and option values", async () => {
    const file = await script("fish");
    const fish = (line: string) => {
      const r = spawnSync("fish", ["-c", `source $argv[1]; complete -C ${JSON.stringify(line)}`, file], {
        encoding: "utf8",
      });
      expect(r.stderr).toBe("");
      return r.stdout
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split("\t")[0]);
    };
    expect(fish("pmagent bb p")).toEqual(["post"]);
    expect(fish("pmagent bb list --status ").sort()).toEqual(["canceled", "done", "error", "in_progress", "open"]);
    expect(fish("pmagent ru")).toEqual(["run", "runs"]);
  });

  it("an unknown shell is a usage error naming the shells", async () => {
    const r = await runCli(["completion", "powershell"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "error: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.",
    );
  });
});
