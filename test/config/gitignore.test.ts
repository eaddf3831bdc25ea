import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ignorePmagentDir } from "../../src/config/index.js";

const tempDir = () => mkdtempSync(join(tmpdir(), "pmagent-gitignore-"));

describe("ignorePmagentDir (pmagent init's .gitignore line)", () => {
  it("creates .gitignore with the line, then leaves it alone", () => {
    const dir = tempDir();
    expect(ignorePmagentDir(dir)).toEqual({ path: join(dir, ".gitignore"), change: "created" });
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe(".pmagent/\n");
    expect(ignorePmagentDir(dir).change).toBe("unchanged");
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe(".pmagent/\n");
  });

  it.each([
    ["a file ending with a newline", "node_modules/\ndist/\n", "node_modules/\ndist/\n.pmagent/\n"],
    ["a file without a final newline", "node_modules/", "node_modules/\n.pmagent/\n"],
    ["an empty file", "", ".pmagent/\n"],
    ["a CRLF file", "node_modules/\r\ndist", "node_modules/\r\ndist\r\n.pmagent/\r\n"],
  ])("appends the line once to %s", (_what, before, after) => {
    const dir = tempDir();
    writeFileSync(join(dir, ".gitignore"), before);
    expect(ignorePmagentDir(dir).change).toBe("appended");
    expect(ignorePmagentDir(dir).change).toBe("unchanged");
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe(after);
  });

  it.each([".pmagent", ".pmagent/", "/.pmagent", "/.pmagent/", ".pmagent/*", "  .pmagent/  ", "!.pmagent/"])(
    "leaves a file that already has %j as it is",
    (line) => {
      const dir = tempDir();
      const text = `dist/\n${line}\nnode_modules/\n`;
      writeFileSync(join(dir, ".gitignore"), text);
      expect(ignorePmagentDir(dir).change).toBe("unchanged");
      expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe(text);
    },
  );

  it("does not take a longer name for the line", () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".gitignore"), ".pmagent-old/\n# .pmagent/\n");
    expect(ignorePmagentDir(dir).change).toBe("appended");
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe(".pmagent-old/\n# .pmagent/\n.pmagent/\n");
  });

  it("a .gitignore that is not a readable file: says what to do", () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".gitignore"));
    expect(() => ignorePmagentDir(dir)).toThrow(
      `cannot read ${join(dir, ".gitignore")} (EISDIR): add the line .pmagent/ to it yourself`,
    );
  });
});
