import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { defaultConfig, loadProject, openConfig } from "../../src/config/index.js";
import { CLI, REPO_ROOT } from "../helpers/proc.js";

/** A project with the default config, and (unless `noStoreDir`) its .pmagent/ directory. */
function project(options: { noStoreDir?: boolean } = {}): { dir: string; configPath: string; validated: string } {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-validated-"));
  const configPath = join(dir, "pmagent.config.json");
  writeFileSync(configPath, `${JSON.stringify(defaultConfig("demo"), null, 2)}\n`);
  if (!options.noStoreDir) mkdirSync(join(dir, ".pmagent"));
  return { dir, configPath, validated: join(dir, ".pmagent", "config.validated.json") };
}

describe("openConfig (the config validated once per text and build)", () => {
  it("gives what loadProject gives, and remembers it in .pmagent/config.validated.json", async () => {
    const p = project();
    const opened = await openConfig({ cwd: p.dir });
    expect(opened).toEqual(loadProject({ cwd: p.dir }));
    const kept = JSON.parse(readFileSync(p.validated, "utf8")) as { configPath: string; text: string; config: unknown };
    expect(kept.configPath).toBe(p.configPath);
    expect(kept.text).toBe(readFileSync(p.configPath, "utf8"));
    expect(kept.config).toEqual(opened.config);
  });

  it("takes the remembered config while the text is the same, and validates again once it changes", async () => {
    const p = project();
    await openConfig({ cwd: p.dir });
    // A remembered config marked so that taking it shows: the schema is not asked again.
    const kept = JSON.parse(readFileSync(p.validated, "utf8")) as { config: { project_id: string } };
    kept.config.project_id = "remembered";
    writeFileSync(p.validated, JSON.stringify(kept));
    expect((await openConfig({ cwd: p.dir })).config.project_id).toBe("remembered");

    writeFileSync(p.configPath, `${JSON.stringify(defaultConfig("renamed"), null, 2)}\n`);
    expect((await openConfig({ cwd: p.dir })).config.project_id).toBe("renamed");
    expect(
      (JSON.parse(readFileSync(p.validated, "utf8")) as { config: { project_id: string } }).config.project_id,
    ).toBe("renamed");
  });

  it("is shared by the bundled CLI and the library of one build", () => {
    const p = project();
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PMAGENT_")));
    execFileSync(process.execPath, [CLI, "runs", "list"], { cwd: p.dir, env, stdio: "ignore" });
    const kept = JSON.parse(readFileSync(p.validated, "utf8")) as { config: { project_id: string } };
    kept.config.project_id = "remembered";
    writeFileSync(p.validated, JSON.stringify(kept));
    // The library as built (dist/config), in a process of its own: it takes what the CLI remembered.
    const library = pathToFileURL(join(REPO_ROOT, "dist/config/light/index.js")).href;
    const script = `const { openConfig } = await import(${JSON.stringify(library)});
process.stdout.write((await openConfig({ cwd: ${JSON.stringify(p.dir)} })).config.project_id);`;
    expect(execFileSync(process.execPath, ["--input-type=module", "-e", script], { env, encoding: "utf8" })).toBe(
      "remembered",
    );
  });

  it("refuses an invalid config with loadProject's error, though a valid one was remembered", async () => {
    const p = project();
    await openConfig({ cwd: p.dir });
    writeFileSync(p.configPath, JSON.stringify({ ...defaultConfig("demo"), humans: [] }));
    const error = (() => {
      try {
        loadProject({ cwd: p.dir });
      } catch (err) {
        return err as Error;
      }
      throw new Error("loadProject accepted an invalid config");
    })();
    await expect(openConfig({ cwd: p.dir })).rejects.toMatchObject({ code: "config_invalid", message: error.message });
    expect(error.message).toContain("$.humans");
  });

  it("validates again when the remembered file is not JSON", async () => {
    const p = project();
    writeFileSync(p.validated, "{ not json");
    expect((await openConfig({ cwd: p.dir })).config.project_id).toBe("demo");
    expect(
      (JSON.parse(readFileSync(p.validated, "utf8")) as { config: { project_id: string } }).config.project_id,
    ).toBe("demo");
  });

  it("writes nothing where the store's directory does not exist", async () => {
    const p = project({ noStoreDir: true });
    expect((await openConfig({ cwd: p.dir })).config.project_id).toBe("demo");
    expect(existsSync(join(p.dir, ".pmagent"))).toBe(false);
  });

  it("says how to fix a missing config, as loadProject does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-validated-none-"));
    await expect(openConfig({ cwd: dir })).rejects.toMatchObject({
      code: "config_not_found",
      message: expect.stringContaining("run `pmagent init` in your repository, or pass --config FILE"),
    });
    await expect(openConfig({ cwd: dir, configPath: "missing.json" })).rejects.toMatchObject({
      code: "config_not_found",
      message: `cannot read config file ${join(dir, "missing.json")}: ENOENT`,
    });
  });
});
