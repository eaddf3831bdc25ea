import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch, parsePatch } from "../../src/prompt/index.js";

const ALLOWED = ["STATE/", "docs/"];
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workspace(files: Record<string, string> = {}): string {
  const ws = mkdtempSync(join(tmpdir(), "apply-patch-"));
  dirs.push(ws);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(ws, path, ".."), { recursive: true });
    writeFileSync(join(ws, path), text);
  }
  return ws;
}

const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
const read = (ws: string, path: string) => readFileSync(join(ws, path), "utf8");
const PLAN = "# Plan\n\n## Steps\n\n- draft\n- review\n\n## Risks\n\n- none\n";

describe("apply_patch", () => {
  it("updates a file by hunks, anchored by their @@ line, with lenient whitespace matching", () => {
    const ws = workspace({ "STATE/plan.md": PLAN });
    const changes = applyPatch(
      ws,
      patch(
        "*** Update File: STATE/plan.md",
        "@@ ## Steps",
        " ",
        "-- draft",
        "+- draft (done)",
        "  - review  ",
        "+- publish",
        "@@ ## Risks",
        "",
        "-- none",
        "+- a reviewer is away",
      ),
      ALLOWED,
    );
    expect(read(ws, "STATE/plan.md")).toBe(
      "# Plan\n\n## Steps\n\n- draft (done)\n- review\n- publish\n\n## Risks\n\n- a reviewer is away\n",
    );
    expect(changes).toEqual([{ type: "update", path: "STATE/plan.md", lines_before: 10, lines_after: 11 }]);
  });

  it("adds, deletes and moves files; a hunk with no old lines adds after its @@ line or at the end", () => {
    const ws = workspace({ "docs/old.md": "gone\n", "docs/a.md": "# A\n\nbody\n" });
    const changes = applyPatch(
      ws,
      patch(
        "*** Add File: docs/new/b.md",
        "+# B",
        "+",
        "+text",
        "*** Delete File: docs/old.md",
        "*** Update File: docs/a.md",
        "*** Move to: docs/c.md",
        "@@ # A",
        "+intro",
        "@@",
        "+the end",
        "*** End of File",
      ),
      ALLOWED,
    );
    expect(read(ws, "docs/new/b.md")).toBe("# B\n\ntext\n");
    expect(existsSync(join(ws, "docs/old.md"))).toBe(false);
    expect(existsSync(join(ws, "docs/a.md"))).toBe(false);
    expect(read(ws, "docs/c.md")).toBe("# A\nintro\n\nbody\nthe end\n");
    expect(changes.map((c) => [c.type, c.path, c.from])).toEqual([
      ["add", "docs/new/b.md", undefined],
      ["delete", "docs/old.md", undefined],
      ["update", "docs/c.md", "docs/a.md"],
    ]);
  });

  it("refuses a path outside the allowed paths, and writes nothing of the patch", () => {
    const ws = workspace({ "docs/a.md": "a\n", "src/x.ts": "x\n" });
    const both = patch("*** Update File: docs/a.md", "-a", "+b", "*** Update File: src/x.ts", "-x", "+y");
    expect(() => applyPatch(ws, both, ALLOWED)).toThrow(
      'apply_patch: path "src/x.ts" is outside the allowed paths (STATE/, docs/); nothing was changed',
    );
    expect(read(ws, "docs/a.md")).toBe("a\n");
    expect(read(ws, "src/x.ts")).toBe("x\n");
    expect(() => applyPatch(ws, patch("*** Add File: docs/../../escape.md", "+x"), ALLOWED)).toThrow(
      'apply_patch: path "docs/../../escape.md" leaves the repository; nothing was changed',
    );
    expect(() => applyPatch(ws, patch("*** Add File: /etc/passwd", "+x"), ALLOWED)).toThrow(
      'apply_patch: path "/etc/passwd" leaves the repository; nothing was changed',
    );
    expect(() => applyPatch(ws, patch("*** Update File: docs/a.md", "*** Move to: src/a.md"), ALLOWED)).toThrow(
      'apply_patch: path "src/a.md" is outside the allowed paths (STATE/, docs/); nothing was changed',
    );
    expect(read(ws, "docs/a.md")).toBe("a\n");
  });

  it("refuses an allowed path that leads through a link to elsewhere", () => {
    const ws = workspace({ "src/x.ts": "x\n" });
    symlinkSync(join(ws, "src"), join(ws, "docs"));
    expect(() => applyPatch(ws, patch("*** Update File: docs/x.ts", "-x", "+y"), ALLOWED)).toThrow(
      'apply_patch: path "docs/x.ts" leads through a link to src/x.ts, outside the allowed paths (STATE/, docs/); nothing was changed',
    );
    const outside = workspace({ "secret.md": "s\n" });
    symlinkSync(outside, join(ws, "STATE"));
    expect(() => applyPatch(ws, patch("*** Add File: STATE/new.md", "+x"), ALLOWED)).toThrow(
      `apply_patch: path "STATE/new.md" leads through a link to ${outside}, outside the allowed paths (STATE/, docs/); nothing was changed`,
    );
    expect(existsSync(join(outside, "new.md"))).toBe(false);
    expect(read(ws, "src/x.ts")).toBe("x\n");
  });

  it.each([
    ["no envelope", "*** Update File: docs/a.md\n-a\n+b", 'apply_patch: the patch must start with "*** Begin Patch"'],
    [
      "no end",
      "*** Begin Patch\n*** Update File: docs/a.md\n-a\n+b",
      'apply_patch: the patch must end with "*** End Patch"',
    ],
    ["nothing", patch(), "apply_patch: the patch changes no file"],
    [
      "unknown header",
      patch("*** Rename File: docs/a.md"),
      'apply_patch: line 2: expected "*** Add File: ", "*** Update File: " or "*** Delete File: ", got "*** Rename File: docs/a.md"',
    ],
    [
      "added line without +",
      patch("*** Add File: docs/b.md", "text"),
      "apply_patch: line 3: every line of an added file starts with '+', got \"text\"",
    ],
    [
      "bad hunk line",
      patch("*** Update File: docs/a.md", "@@", "*a"),
      "apply_patch: line 4: a hunk line starts with ' ', '-' or '+', got \"*a\"",
    ],
    ["no hunk", patch("*** Update File: docs/a.md"), 'apply_patch: "*** Update File: docs/a.md" has no hunk'],
    ["no path", patch("*** Delete File: "), 'apply_patch: line 2: "*** Delete File:" names no path'],
  ])("refuses a malformed patch (%s)", (_what, text, message) => {
    expect(() => parsePatch(text)).toThrow(message);
    try {
      parsePatch(text);
    } catch (err) {
      expect(err).toMatchObject({ code: "invalid_patch", kind: "usage" });
    }
  });

  it("refuses a patch that does not fit the files, naming what did not match", () => {
    const ws = workspace({ "docs/a.md": "one\ntwo\n" });
    expect(() => applyPatch(ws, patch("*** Update File: docs/a.md", " one", "-three", "+four"), ALLOWED)).toThrow(
      "apply_patch: docs/a.md: hunk 1 does not match the file; these lines were not found:\n  one\n  three\nRead the file again and send context lines as they are; nothing was changed",
    );
    expect(() => applyPatch(ws, patch("*** Update File: docs/a.md", "@@ zero", "+x"), ALLOWED)).toThrow(
      'apply_patch: docs/a.md: hunk 1\'s "@@ zero" line is not in the file; nothing was changed',
    );
    expect(() => applyPatch(ws, patch("*** Add File: docs/a.md", "+x"), ALLOWED)).toThrow(
      'apply_patch: docs/a.md already exists: use "*** Update File: docs/a.md"; nothing was changed',
    );
    expect(() => applyPatch(ws, patch("*** Update File: docs/b.md", "+x"), ALLOWED)).toThrow(
      'apply_patch: docs/b.md does not exist: use "*** Add File: docs/b.md" to create it; nothing was changed',
    );
    expect(() => applyPatch(ws, patch("*** Delete File: docs/b.md"), ALLOWED)).toThrow(
      "apply_patch: docs/b.md does not exist, so it cannot be deleted; nothing was changed",
    );
    expect(read(ws, "docs/a.md")).toBe("one\ntwo\n");
  });
});
