import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig, type Project } from "../../src/config/index.js";
import { Supervisor, type SupervisorHooks, type SupervisorOptions } from "../../src/lattice/index.js";
import { CLI, REPO_ROOT } from "../helpers/proc.js";
import type { TestStore } from "../helpers/stores.js";

export const DIST = join(REPO_ROOT, "dist");
export const SCENARIO_SPRITE = join(REPO_ROOT, "test/lattice/sprites/scenario.mjs");
export const PMAGENT = [process.execPath, CLI];
/** The sprite that asks for an action (scenario in its workspace) and reports the outcome. */
export const ACTION_SPRITE = join(REPO_ROOT, "test/lattice/sprites/action-sprite.mjs");
/** Write a scenario into `dir` and return the sprite command that plays it (test/lattice/sprites/scenario.mjs). */
export function scenarioSprite(dir: string, name: string, scenario: unknown): string[] {
  const file = join(dir, `${name}.scenario.json`);
  writeFileSync(file, JSON.stringify(scenario));
  return [process.execPath, SCENARIO_SPRITE, DIST, file];
}

/** What a blocking OPEN_PR waits for. */
export const PR_INPUTS = { number: "integer", url: "string", head: "string", base: "string" };

/** A git repository at `root` with everything in it committed on main (run state and scenarios ignored). */
export function gitInit(root: string, message = "initial"): void {
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
      cwd: root,
      stdio: "ignore",
    });
  git("init", "-q", "-b", "main");
  writeFileSync(join(root, ".gitignore"), ".pmagent/\n*.scenario.json\n*.plan.json\n");
  git("add", ".");
  git("commit", "-q", "-m", message);
}

/** The spec's own example events, verbatim. */
export const SPEC_EVENTS = {
  info: {
    protocol_version: "v1",
    event_type: "INFO",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T10:30:00Z",
    payload: { message: "Starting implementation" },
  },
  infoProgress: {
    protocol_version: "v1",
    event_type: "INFO",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T10:30:00Z",
    payload: {
      message: "Running test suite (75% complete)",
      kind: "progress",
      metadata: { percent: 75, phase: "test" },
    },
  },
  phaseStarted: {
    protocol_version: "v1",
    event_type: "PHASE_STARTED",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T10:31:00Z",
    payload: { phase: "implement" },
  },
  phaseFinished: {
    protocol_version: "v1",
    event_type: "PHASE_FINISHED",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T10:45:00Z",
    payload: { phase: "implement", success: true },
  },
  postComment: {
    protocol_version: "v1",
    event_type: "ACTION_REQUEST",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T10:46:00Z",
    payload: {
      action: "POST_COMMENT",
      parameters: { body: "Implementation complete, tests passing." },
      blocking: false,
    },
  },
  openPr: {
    protocol_version: "v1",
    event_type: "ACTION_REQUEST",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T10:46:00Z",
    payload: {
      action: "OPEN_PR",
      parameters: { title: "Fix cache invalidation", body: "Resolves #17", base: "main", head: "sprite/fix-cache" },
      blocking: true,
    },
  },
  artifact: {
    protocol_version: "v1",
    event_type: "ARTIFACT",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T10:47:00Z",
    payload: { kind: "branch", ref: "sprite/fix-cache", url: null, metadata: {} },
  },
  waiting: {
    protocol_version: "v1",
    event_type: "WAITING",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T10:48:00Z",
    payload: {
      reason: "PR_REVIEW",
      checkpoint_id: "chk_abc123",
      expected_inputs: { approved: "boolean", comments: "array<string>" },
    },
  },
  completed: {
    protocol_version: "v1",
    event_type: "COMPLETED",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T11:00:00Z",
    payload: { status: "success", summary: "Implemented cache invalidation. All tests passing." },
  },
  error: {
    protocol_version: "v1",
    event_type: "ERROR",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T11:01:00Z",
    payload: {
      message: "Build failed with exit code 1 after 3 retries",
      details: { phase: "test", exit_code: 1, attempts: 3 },
    },
  },
  proposal: {
    protocol_version: "v1",
    event_type: "ENVIRONMENT_PROPOSAL",
    sprite_id: "sprite-42",
    work_item_id: "issue-17",
    timestamp: "2026-01-15T11:02:00Z",
    payload: {
      observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "bash: node: command not found" },
      suggested_adjustment: { type: "runtime_install", details: { runtime: "node", version: "20" } },
      confidence: 0.85,
      evidence: ["package.json present", "no .nvmrc found"],
      scope: "repo_specific",
    },
  },
} as const;

export interface TestProject {
  project: Project;
  root: string;
  /** Write a scenario file and return the sprite command that plays it. */
  sprite(name: string, scenario: unknown): string[];
  supervisor(hooks?: SupervisorHooks, more?: Partial<SupervisorOptions>): Supervisor;
  cleanup(): void;
}

/** The lane a test project has unless its test gives others: a Builder handing on to a Reviewer. */
export const TEST_LANE = {
  layer: "test",
  name: "build",
  roles: [
    {
      name: "Builder",
      allowed_kinds: ["build_request"],
      next: { to: "Reviewer", kind: "review_request", id_suffix: "-review" },
    },
    { name: "Reviewer", allowed_kinds: ["review_request"] },
  ],
};

/** A project in a temp dir: lane Builder → Reviewer, the store from `ts` (null: one only child processes open, no `supervisor()` here). */
export function testProject(
  ts: Pick<TestStore, "store"> | null,
  extraConfig: Record<string, unknown> = {},
): TestProject {
  const root = mkdtempSync(join(tmpdir(), "pmagent-lattice-"));
  const config = {
    project_id: "demo",
    humans: ["Human"],
    lanes: [TEST_LANE],
    ...extraConfig,
  };
  const text = JSON.stringify(config, null, 2);
  writeFileSync(join(root, "pmagent.config.json"), text);
  const project: Project = {
    root,
    configPath: join(root, "pmagent.config.json"),
    config: parseConfig(text, "pmagent.config.json"),
  };
  return {
    project,
    root,
    sprite: (name, scenario) => scenarioSprite(root, name, scenario),
    supervisor(hooks, more = {}) {
      if (!ts) throw new Error("testProject(null) has no store to supervise with");
      return new Supervisor({ store: ts.store, project, hooks, pmagentCommand: PMAGENT, pollMs: 20, ...more });
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}
