import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import semver from "semver";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { REPO_ROOT, runProcess } from "./helpers/proc.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

describe("npm package", () => {
  it("depends only on packages whose engines allow the Node.js it promises (package.json engines)", () => {
    const read = (file: string) =>
      JSON.parse(readFileSync(join(REPO_ROOT, file), "utf8")) as {
        engines: { node: string };
        packages: Record<string, { engines?: { node?: string } }>;
      };
    const lowest = semver.minVersion(read("package.json").engines.node)!.version;
    const refused = Object.entries(read("package-lock.json").packages)
      .filter(
        ([path, p]) => path !== "" && typeof p.engines?.node === "string" && !semver.satisfies(lowest, p.engines.node),
      )
      .map(([path, p]) => `${path} wants node ${p.engines!.node}`);
    expect(
      refused,
      `these need a newer Node.js than ${lowest}: pin a version that allows it (package.json "overrides")`,
    ).toEqual([]);
  });

  it(
    "packs into a tarball that installs on its own (as a user installs it, outside any clone): no engine warning, and pmagent --help and pmagent demo run there",
    { timeout: 600_000 },
    async () => {
      const out = mkdtempSync(join(tmpdir(), "pmagent-pack-"));
      // dist/ is already built by `npm test`; skip the prepare script's rebuild.
      const pack = await runProcess(npm, ["pack", "--ignore-scripts", "--pack-destination", out, "--json"], {
        cwd: REPO_ROOT,
      });
      expect(pack.code, pack.stderr).toBe(0);
      const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
      const files = info!.files.map((f) => f.path);
      expect(files).toContain("dist/bin/main.js");
      expect(files).toContain("schemas/config.schema.json");
      expect(files).toContain("LICENSE");
      expect(files.some((f) => f.startsWith("src/") || f.startsWith("test/"))).toBe(false);

      // The README's global install, into a prefix of its own: the SQLite addon builds as on a user's
      // machine, and the versions resolved are the ones a consumer gets (no lockfile, no overrides).
      const prefix = mkdtempSync(join(tmpdir(), "pmagent-global-"));
      const tarball = join(out, readdirSync(out)[0]!);
      const install = await runProcess(
        npm,
        [
          "install",
          "-g",
          "--prefix",
          prefix,
          "--no-audit",
          "--no-fund",
          "--prefer-offline",
          "--allow-scripts=better-sqlite3",
          tarball,
        ],
        { cwd: prefix },
      );
      expect(install.code, install.stderr).toBe(0);
      expect(install.stderr, "a consumer on this Node.js gets a dependency whose engines refuse it").not.toContain(
        "EBADENGINE",
      );

      const bin = join(prefix, "bin/pmagent");
      const elsewhere = mkdtempSync(join(tmpdir(), "pmagent-elsewhere-"));
      const help = await runProcess(bin, ["--help"], { cwd: elsewhere });
      expect(help.stderr).toBe("");
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("Usage: pmagent [options] [command]");
      expect(help.stdout).toContain("Exit codes:");
      // The subpaths a user's code imports resolve in the installed package.
      const probe = join(prefix, "lib", "probe.mjs");
      writeFileSync(
        probe,
        'const t = await import("pmagent/testing"); const s = await import("pmagent/sprite"); console.log(typeof t.runSprite, typeof t.startFakeOpenAI, typeof s.Sprite);\n',
      );
      const subpaths = await runProcess(process.execPath, [probe], { cwd: elsewhere });
      expect([subpaths.stdout.trim(), subpaths.stderr]).toEqual(["function function function", ""]);
      const version = await runProcess(bin, ["--version"], { cwd: elsewhere });
      expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version);

      // With the prefix's bin on PATH, the demo's hints name `pmagent` as the user would type it.
      const env = { ...process.env, PATH: `${join(prefix, "bin")}:${process.env.PATH ?? ""}` };
      const demo = await runProcess("pmagent", ["demo", "--dir", join(elsewhere, "demo")], { cwd: elsewhere, env });
      expect(demo.code, demo.stderr).toBe(0);
      expect(demo.stdout).toContain("Kai — lane status:");
      expect(demo.stdout).toMatch(/^ {2}pmagent bb list · pmagent runs list · pmagent prs/m);
    },
  );
});

describe("the package root (pmagent)", () => {
  /** The names README's "Library API" lists: its bullets' backticked names. */
  function documented(): string[] {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const section = readme.split("\n## Library API\n")[1]!.split("\n## ")[0]!;
    return section
      .split("\n")
      .filter((line) => line.startsWith("- "))
      .flatMap((line) => [...line.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1]!))
      .sort();
  }

  it(
    "exports exactly the names README's Library API lists (values and types): a new export is a decision",
    { timeout: 120_000 },
    () => {
      const index = join(REPO_ROOT, "src/index.ts");
      const program = ts.createProgram([index], {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        strict: true,
        skipLibCheck: true,
        noEmit: true,
      });
      const checker = program.getTypeChecker();
      const root = checker.getSymbolAtLocation(program.getSourceFile(index)!)!;
      const exported = checker
        .getExportsOfModule(root)
        .map((s) => s.getName())
        .sort();
      const listed = documented();
      expect(new Set(listed).size, "README's Library API names a name twice").toBe(listed.length);
      expect(exported).toEqual(listed);
    },
  );

  it("has at run time no name beyond the list, and none of its names is undefined", async () => {
    const root = (await import("../src/index.js")) as Record<string, unknown>;
    const listed = new Set(documented());
    expect(Object.keys(root).filter((name) => !listed.has(name))).toEqual([]);
    expect(Object.values(root).every((v) => v !== undefined)).toBe(true);
  });
});
