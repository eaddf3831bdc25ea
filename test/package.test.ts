import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import semver from "semver";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, runProcess } from "./helpers/proc.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

describe("npm package", () => {
  it("depends only on packages whose engines allow the Node.js it promises (package.json engines)", () => {
    const read = (file: string) => JSON.parse(readFileSync(join(REPO_ROOT, file), "utf8")) as { engines: { node: string }; packages: Record<string, { engines?: { node?: string } }> };
    const lowest = semver.minVersion(read("package.json").engines.node)!.version;
    const refused = Object.entries(read("package-lock.json").packages)
      .filter(([path, p]) => path !== "" && typeof p.engines?.node === "string" && !semver.satisfies(lowest, p.engines.node))
      .map(([path, p]) => `${path} wants node ${p.engines!.node}`);
    expect(refused, `these need a newer Node.js than ${lowest}: pin a version that allows it (package.json "overrides")`).toEqual([]);
  });

  it("packs into a tarball that installs into an empty directory, and its pmagent --help runs", { timeout: 300_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), "pmagent-pack-"));
    // dist/ is already built by `npm test`; skip the prepare script's rebuild.
    const pack = await runProcess(npm, ["pack", "--ignore-scripts", "--pack-destination", out, "--json"], { cwd: REPO_ROOT });
    expect(pack.code, pack.stderr).toBe(0);
    const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info!.files.map((f) => f.path);
    expect(files).toContain("dist/cli/main.js");
    expect(files).toContain("schemas/config.schema.json");
    expect(files).toContain("LICENSE");
    expect(files.some((f) => f.startsWith("src/") || f.startsWith("test/"))).toBe(false);

    const app = mkdtempSync(join(tmpdir(), "pmagent-install-"));
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "empty-app", version: "1.0.0", private: true }));
    // Native addons build at install time on a user's machine; the CLI loads them only when a store opens.
    const install = await runProcess(npm, ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", join(out, readdirSync(out)[0]!)], { cwd: app });
    expect(install.code, install.stderr).toBe(0);
    const help = await runProcess(join(app, "node_modules/.bin/pmagent"), ["--help"], { cwd: app });
    expect(help.stderr).toBe("");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: pmagent [options] [command]");
    expect(help.stdout).toContain("Exit codes:");
    const version = await runProcess(join(app, "node_modules/.bin/pmagent"), ["--version"], { cwd: app });
    expect(version.stdout.trim()).toBe(JSON.parse((await import("node:fs")).readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version);
  });
});
