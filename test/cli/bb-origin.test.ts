import { beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/proc.js";

const env = { ...process.env, PMAGENT_DATABASE_URL: "", PMAGENT_SQLITE_PATH: "", PMAGENT_ACTOR: "" };
const fixtures = join(import.meta.dirname, "..", "blackboard", "fixtures");
const board = readFileSync(join(fixtures, "board-two-projects.txt"), "utf8");
const withRef = readFileSync(join(fixtures, "aya-request-payload-ref.json"), "utf8");
let dir: string;
const pm = (args: string[], input?: string, cwd = dir) => runCli(args, { cwd, env, input });

async function project(id: string): Promise<string> {
  const d = mkdtempSync(join(tmpdir(), "pmagent-bb-origin-"));
  await pm(["init", "--project-id", id], undefined, d);
  return d;
}

beforeEach(async () => {
  dir = await project("vpm-mini");
});

const lines = (out: string) =>
  out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("pmagent bb with entries as the origin writes them", () => {
  it("imports pasted comment bodies (bare and fenced, two projects, chained ids): import → export → import loses nothing", async () => {
    writeFileSync(join(dir, "board.txt"), board);
    const first = await pm(["bb", "import", "board.txt", "--format", "json"]);
    expect(first.stderr).toBe("");
    expect(JSON.parse(first.stdout)).toEqual({
      created: [
        "vpm-mini-docupdate-issue571-1",
        "vpm-mini-docupdate-issue571-1-review",
        "hakone-e2-docupdate-issue12-1",
      ],
      unchanged: [],
      refused: [],
      bad_comments: [],
    });

    // This project's list has its own two; the other project's entry is there with a filter.
    expect(
      (await pm(["bb", "list"])).stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("  ")[0]),
    ).toEqual(["vpm-mini-docupdate-issue571-1", "vpm-mini-docupdate-issue571-1-review"]);
    expect(JSON.parse((await pm(["bb", "list", "--project", "hakone-e2", "--format", "json"])).stdout)).toMatchObject({
      items: [{ id: "hakone-e2-docupdate-issue12-1", project_id: "hakone-e2" }],
      next: null,
    });
    const all = await pm(["bb", "list", "--all-projects"]);
    expect(all.stdout).toContain("[hakone-e2] hakone-e2-docupdate-issue12-1  open  Human → Aya");
    expect(all.stdout).toContain("[vpm-mini] vpm-mini-docupdate-issue571-1-review  open  Aya → Sho");
    // This project's Aya never picks the other project's open request.
    expect((await pm(["bb", "claim", "--role", "Aya"])).stdout).toBe("no open entry for Aya\n");

    const exported = (await pm(["bb", "export", "--all-projects"])).stdout;
    const entries = lines(exported);
    expect(entries.map((e) => e.id)).toEqual([
      "hakone-e2-docupdate-issue12-1",
      "vpm-mini-docupdate-issue571-1",
      "vpm-mini-docupdate-issue571-1-review",
    ]);
    expect(entries[2]).toMatchObject({
      payload_ref: { kind: "path", value: "reports/doc_update_proposals/2025-11-30-vpm-mini.json" },
      payload: { refs: { source_board_id: "vpm-mini-docupdate-issue571-1" } },
      source_run_id: 19793359086,
    });

    const other = await project("vpm-mini");
    const second = await pm(["bb", "import", "-", "--format", "json"], exported, other);
    expect(JSON.parse(second.stdout).created).toHaveLength(3);
    expect((await pm(["bb", "export", "--all-projects"], undefined, other)).stdout).toBe(exported);
    // And once more into the same store: nothing changes.
    expect(
      JSON.parse((await pm(["bb", "import", "-", "--format", "json"], exported, other)).stdout).unchanged,
    ).toHaveLength(3);
  });

  it("keeps payload_ref on an entry imported as JSON and shown", async () => {
    expect((await pm(["bb", "import", "-"], withRef)).code).toBe(0);
    const shown = JSON.parse((await pm(["bb", "show", "vpm-mini-docupdate-issue571-1", "--format", "json"])).stdout);
    expect(shown).toEqual(JSON.parse(withRef));
  });

  it("reports bad comment bodies as sync does and imports the rest (exit 1)", async () => {
    const bad = `${board}\n\n<!-- blackboard:doc_update_v1 -->\n\njson\n{"id": "x", "created_at": "2025-11-30T02:30:00"`;
    const r = await pm(["bb", "import", "-", "--format", "json"], bad);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.created).toHaveLength(3);
    expect(report.bad_comments).toEqual([
      {
        comment: 4,
        line: 57,
        code: "bb_comment_invalid_json",
        reason: expect.stringMatching(/^invalid JSON at line 4, column \d+: unexpected end of input/),
      },
    ]);
    const text = await pm(
      ["bb", "import", "-"],
      `<!-- blackboard:doc_update_v1 -->\n\njson\n${JSON.stringify({ ...JSON.parse(withRef), created_at: "2025-11-30T02:30:00" })}`,
    );
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      'imported 0, unchanged 0, refused 0, bad comments 1\n  bad comment 1 (line 1): the entry does not match the blackboard entry schema: $.created_at: "2025-11-30T02:30:00" has no time zone',
    );
  });

  it.each([
    [
      "text before the first marker",
      `notes\n<!-- blackboard:doc_update_v1 -->\n\njson\n{}`,
      "standard input: text before the first <!-- blackboard:TYPE --> marker",
    ],
    ["both project flags", null, "option '--project <id>' cannot be used with option '--all-projects'"],
  ])("refuses %s", async (_what, input, message) => {
    const r =
      input === null
        ? await pm(["bb", "list", "--project", "x", "--all-projects"])
        : await pm(["bb", "import", "-"], input);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });
});
