import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  PACKAGE_TEMPLATES_DIR,
  AGENT_ROLES,
  developerInstructions,
  loadTemplates,
  renderLedgerBlock,
} from "../../src/prompt/index.js";

const dirs: string[] = [];
function project(files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "pmagent-prompt-"));
  dirs.push(root);
  for (const [name, text] of Object.entries(files)) {
    const path = join(root, ".pmagent/prompts", name);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, text);
  }
  return root;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ledger = {
  entry_id: "vpm-issue571-1-review",
  lane: "layer_b/doc_update",
  role: "Sho",
  cycle: 2,
  refs: ["vpm-issue571-1", "runs/41/proposal.md"],
};

describe("prompt templates", () => {
  it("loads the package's base prompt and one developer template per role", () => {
    const t = loadTemplates();
    expect(t.base.origin).toBe("package");
    expect(t.base.text).toBe(readFileSync(join(PACKAGE_TEMPLATES_DIR, "base.md"), "utf8").trimEnd());
    for (const role of AGENT_ROLES) {
      expect(t.developer[role].name).toBe(`dev/${role}.md`);
      expect(t.developer[role].text).toContain(`# Role: ${role}`);
    }
  });

  it("the orchestrator may edit plans and documents; the reviewer audits claims, gives planning feedback and states its level", () => {
    const t = loadTemplates();
    expect(t.developer.orchestrator.text).toMatch(/apply_patch/);
    expect(t.developer.orchestrator.text).toMatch(/update_plan/);
    const reviewer = developerInstructions({ role: "reviewer", templates: t, reviewLevel: "soft_gate" });
    expect(reviewer).toContain("Review level: `soft_gate`.");
    expect(reviewer).toMatch(/claim-evidence audit/);
    expect(reviewer).toMatch(/planning feedback/i);
    expect(developerInstructions({ role: "reviewer", templates: t })).toContain("Review level: `hard_gate`.");
  });

  it("a project overrides a template file by file under .pmagent/prompts/", () => {
    const root = project({ "base.md": "Project base prompt.\n", "dev/searcher.md": "# Searcher, project style\n" });
    const t = loadTemplates({ projectRoot: root });
    expect(t.base).toMatchObject({
      origin: "project",
      text: "Project base prompt.",
      path: join(root, ".pmagent/prompts/base.md"),
    });
    expect(t.developer.searcher).toMatchObject({ origin: "project", text: "# Searcher, project style" });
    expect(t.developer.executor.origin).toBe("package");
  });

  it("refuses an empty override, naming the file", () => {
    const root = project({ "dev/executor.md": "  \n" });
    expect(() => loadTemplates({ projectRoot: root })).toThrow(
      `prompt template ${join(root, ".pmagent/prompts/dev/executor.md")} is empty: write the prompt into it or delete it to use the built-in one`,
    );
  });

  it("refuses a reviewer override that does not state the level, and unknown placeholders", () => {
    const noLevel = loadTemplates({ projectRoot: project({ "dev/reviewer.md": "Review it.\n" }) });
    expect(() => developerInstructions({ role: "reviewer", templates: noLevel })).toThrow(
      /dev\/reviewer\.md must contain \{\{review_level\}\}/,
    );
    const unknown = loadTemplates({ projectRoot: project({ "dev/executor.md": "Do {{task}} now.\n" }) });
    expect(() => developerInstructions({ role: "executor", templates: unknown })).toThrow(
      /dev\/executor\.md uses unknown placeholder \{\{task\}\} \(known: none\)/,
    );
  });

  it("refuses an override that links outside the project", () => {
    const outside = project();
    writeFileSync(join(outside, "secret.txt"), "not a prompt");
    const root = project();
    mkdirSync(join(root, ".pmagent/prompts"), { recursive: true });
    symlinkSync(join(outside, "secret.txt"), join(root, ".pmagent/prompts/base.md"));
    expect(() => loadTemplates({ projectRoot: root })).toThrow(
      `prompt template ${join(root, ".pmagent/prompts/base.md")} links to "${join(outside, "secret.txt")}" is outside ${root}`,
    );
  });

  it("follows a link that stays inside the project", () => {
    const root = project({ "shared.md": "Shared base.\n" });
    symlinkSync("shared.md", join(root, ".pmagent/prompts/base.md"));
    expect(loadTemplates({ projectRoot: root }).base.text).toBe("Shared base.");
  });

  it("reports an override that cannot be read", () => {
    const root = project();
    mkdirSync(join(root, ".pmagent/prompts/base.md"), { recursive: true });
    expect(() => loadTemplates({ projectRoot: root })).toThrow(/cannot read prompt template .*base\.md: EISDIR/);
  });

  it("renders the ledger block: entry id, lane, role, cycle and refs", () => {
    expect(renderLedgerBlock(ledger)).toBe(
      [
        "[context_ledger]",
        "entry_id: vpm-issue571-1-review",
        "lane: layer_b/doc_update",
        "role: Sho",
        "cycle: 2",
        "refs:",
        "- vpm-issue571-1",
        "- runs/41/proposal.md",
      ].join("\n"),
    );
    expect(renderLedgerBlock({ ...ledger, refs: [] }).endsWith("\nrefs: none")).toBe(true);
  });
});
