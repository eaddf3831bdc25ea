/** Real git repositories and projects for the Lattice action tests. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { docUpdateLane, parseConfig, type ConfigInput, type Project } from "../../src/config/index.js";
import type { ActionRequest } from "../../src/lattice/index.js";

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
};

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

export interface TestProject {
  project: Project;
  dir: string;
  cleanup(): void;
}

/** A git repository with one commit on main and a pmagent.config.json (extra config merged in). */
export function makeProject(extra: Partial<ConfigInput> = {}): TestProject {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-lattice-"));
  const root = join(dir, "repo");
  mkdirSync(root);
  sh(root, "init", "--quiet", "-b", "main");
  writeFileSync(join(root, "README.md"), "# demo\n");
  sh(root, "add", ".");
  sh(root, "commit", "--quiet", "-m", "initial");
  const lane = docUpdateLane();
  lane.roles = lane.roles.map((r) => (r.name === "Tsugu" ? { ...r, credentials: ["DEPLOY_TOKEN"] } : r));
  const config: ConfigInput = { project_id: "demo", humans: ["Human"], lanes: [lane], ...extra };
  const text = JSON.stringify(config, null, 2);
  writeFileSync(join(root, "pmagent.config.json"), text);
  const project: Project = {
    root,
    configPath: join(root, "pmagent.config.json"),
    config: parseConfig(text, "pmagent.config.json"),
  };
  return { project, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A sprite workspace cloned from the project, with `branch` holding one new commit. */
export function makeWorkspace(root: string, name: string, branch: string): { path: string; sha: string } {
  const path = join(root, "..", name);
  sh(join(root, ".."), "clone", "--quiet", root, path);
  sh(path, "checkout", "--quiet", "-b", branch);
  mkdirSync(join(path, "docs"), { recursive: true });
  writeFileSync(join(path, "docs", `${name}.md`), `work of ${name}\n`);
  sh(path, "add", ".");
  sh(path, "commit", "--quiet", "-m", `work on ${branch}`);
  return { path, sha: sh(path, "rev-parse", "HEAD") };
}

let seq = 0;

export function actionRequest(fields: Partial<ActionRequest> & Pick<ActionRequest, "action">): ActionRequest {
  seq += 1;
  return {
    projectId: "demo",
    runId: "run-1",
    eventHash: `hash-${process.pid}-${seq}`,
    role: "Tsugu",
    workItemId: "issue-1",
    workspace: "/nonexistent",
    parameters: {},
    blocking: false,
    ...fields,
  };
}
