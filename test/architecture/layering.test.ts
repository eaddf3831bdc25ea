import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ESLint } from "eslint";
import { REPO_ROOT } from "../helpers/proc.js";

/**
 * The lint rules that keep the layering as ARCHITECTURE.md draws it: each case adds one import to
 * a real source file (linted as text, nothing written) and expects the rule to refuse it.
 */
const eslint = new ESLint({ cwd: REPO_ROOT });

async function messagesFor(
  file: string,
  extraImport: string,
): Promise<Array<{ ruleId: string | null; message: string }>> {
  const path = join(REPO_ROOT, file);
  const [result] = await eslint.lintText(`${extraImport}\n${readFileSync(path, "utf8")}`, { filePath: path });
  return result!.messages.map((m) => ({ ruleId: m.ruleId, message: m.message }));
}

describe("layering lint", () => {
  it("accepts the source as it is", async () => {
    expect(await messagesFor("src/lattice/protocol/lines.ts", "")).toEqual([]);
  });

  it("refuses a lower module importing a higher one (lattice → oa)", async () => {
    const messages = await messagesFor("src/lattice/index.ts", 'export { gateRun } from "../oa/index.js";');
    expect(messages.map((m) => m.message).join("\n")).toMatch(
      /src\/lattice is below .*oa.*: a lower module never imports a higher one/,
    );
  });

  it("refuses the forge importing a module above it (forge → lattice, forge → blackboard)", async () => {
    const up = await messagesFor("src/forge/forge.ts", 'import { RunStore } from "../lattice/index.js";');
    expect(up.map((m) => m.message).join("\n")).toMatch(
      /src\/forge is below .*lattice.*: a lower module never imports a higher one/,
    );
    const side = await messagesFor("src/forge/forge.ts", 'import { Blackboard } from "../blackboard/index.js";');
    expect(side.map((m) => m.message).join("\n")).toMatch(/src\/forge is below blackboard/);
  });

  it("refuses a lattice sub-module importing one above it (protocol → supervisor)", async () => {
    const messages = await messagesFor(
      "src/lattice/protocol/lines.ts",
      'import type { Supervisor } from "../supervisor/index.js";',
    );
    expect(messages.map((m) => m.message).join("\n")).toMatch(/lattice\/protocol is below .*supervisor/);
  });

  it("refuses importing commander or better-sqlite3 as an ES module (they are required; types may be imported)", async () => {
    const cli = await messagesFor("src/cli/bb.ts", 'import { Option as O } from "commander";');
    expect(cli.map((m) => m.message).join("\n")).toMatch(/commander is required \(createRequire\), not imported/);
    const store = await messagesFor("src/store/open.ts", 'import Database from "better-sqlite3";');
    expect(store.map((m) => m.message).join("\n")).toMatch(/better-sqlite3 is required \(createRequire\)/);
    const types = await messagesFor("src/store/open.ts", 'import type Db from "better-sqlite3";\nexport type D = Db;');
    expect(types).toEqual([]);
  });

  it("refuses reaching into another module's files instead of its index", async () => {
    const messages = await messagesFor("src/kai/kai.ts", 'import { RunStore } from "../lattice/runs/run-store.js";');
    expect(messages.map((m) => m.message).join("\n")).toMatch(/talk through each other's index\.ts/);
  });

  it("refuses a module's sub-module importing one above it (kai/evidence → kai/reports)", async () => {
    const messages = await messagesFor(
      "src/kai/evidence/git.ts",
      'import type { LaneStatus } from "../reports/index.js";',
    );
    expect(messages.map((m) => m.message).join("\n")).toMatch(/kai\/evidence is below reports in the kai module/);
  });

  it("refuses a parent's file reaching into its sub-module instead of the sub-module's index", async () => {
    const messages = await messagesFor("src/server/app.ts", 'import { registerTools } from "./mcp/tool.js";');
    expect(messages.map((m) => m.message).join("\n")).toMatch(
      /src\/server's sub-modules \(mcp\) are entered through their index\.ts/,
    );
  });

  it("keeps a sub-module under its module's layer (blackboard/github → lattice)", async () => {
    const messages = await messagesFor(
      "src/blackboard/github/sync.ts",
      'import { RunStore } from "../../lattice/index.js";',
    );
    expect(messages.map((m) => m.message).join("\n")).toMatch(/src\/blackboard is below .*lattice/);
  });

  it("lets the CLI open a project through app/project, the composition root's light entry, and nothing else of app's inside", async () => {
    const light = await messagesFor(
      "src/cli/kai.ts",
      'import { openProject } from "../app/project/index.js";\nvoid openProject;',
    );
    expect(light.filter((m) => /index\.ts/.test(m.message))).toEqual([]);
    const inner = await messagesFor(
      "src/cli/kai.ts",
      'import { projectSupervisor } from "../app/supervisor.js";\nvoid projectSupervisor;',
    );
    expect(inner.map((m) => m.message).join("\n")).toMatch(/talk through each other's index\.ts/);
  });

  it("refuses an import that closes a circle inside a folder (parser → outbox → parser)", async () => {
    const messages = await messagesFor(
      "src/lattice/protocol/parser.ts",
      'import { readOutbox } from "./outbox.js";\nvoid readOutbox;',
    );
    expect(
      messages.some((m) => m.ruleId === "import-x/no-cycle"),
      JSON.stringify(messages),
    ).toBe(true);
  });
});
