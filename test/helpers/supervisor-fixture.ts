/**
 * The set-up most supervisor, worker and lane tests share: a fresh migrated store, a test project
 * on it (lane Builder → Reviewer, `tp.supervisor()` builds a supervisor) and the project's
 * blackboard. `useSupervisorFixture` registers the `beforeEach`/`afterEach` hooks of a file or
 * `describe` block; `openSupervisorFixture` is the same for one test that sets up by itself.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { Blackboard } from "../../src/blackboard/index.js";
import { gitInit, testProject, type TestProject } from "../lattice/helpers.js";
import type { StoreKind, TestStore } from "./stores.js";

export interface SupervisorFixtureOptions {
  /** Merged into the test project's config (a function: read when each test starts). */
  config?: Record<string, unknown> | (() => Record<string, unknown>);
  /** Make the project a git repository with everything committed on main. */
  git?: boolean;
  /** `useSupervisorFixture` only: "each" (default) a fresh fixture per test, "all" one for the block's tests. */
  scope?: "each" | "all";
}

export interface SupervisorFixture {
  /** The test's store (`ts.store`, `ts.env` for child `pmagent` processes). */
  readonly ts: TestStore;
  /** The test project on that store: `tp.supervisor()`, `tp.sprite()`, `tp.project`, `tp.root`. */
  readonly tp: TestProject;
  /** The project's blackboard ("demo", human "Human"). */
  readonly board: Blackboard;
  /** Swap the test project for one made with other options, on the same store (the old one removed). */
  reproject(options?: Omit<SupervisorFixtureOptions, "scope">): TestProject;
}

type Opener = Pick<StoreKind, "open"> | (() => Promise<TestStore>);

/** One fixture, for a test that opens and cleans up by itself. */
export async function openSupervisorFixture(
  kind: Opener,
  options: SupervisorFixtureOptions = {},
): Promise<SupervisorFixture & { cleanup(): Promise<void> }> {
  const ts = await (typeof kind === "function" ? kind() : kind.open());
  const project = (o: SupervisorFixtureOptions) => {
    const tp = testProject(ts, typeof o.config === "function" ? o.config() : o.config);
    if (o.git) gitInit(tp.root);
    return tp;
  };
  let tp = project(options);
  const board = new Blackboard(ts.store, { projectId: tp.project.config.project_id, humans: ["Human"] });
  return {
    ts,
    get tp() {
      return tp;
    },
    board,
    reproject(o = {}) {
      tp.cleanup();
      tp = project(o);
      return tp;
    },
    async cleanup() {
      await ts.cleanup();
      tp.cleanup();
    },
  };
}

/** A fresh fixture for each test of the calling file or `describe` block (or one for all of them), cleaned up after it. */
export function useSupervisorFixture(kind: Opener, options: SupervisorFixtureOptions = {}): SupervisorFixture {
  let current: (SupervisorFixture & { cleanup(): Promise<void> }) | undefined;
  const live = () => {
    if (!current) throw new Error("the supervisor fixture is set up in a before hook: use it inside a hook or a test");
    return current;
  };
  const [before, after] = options.scope === "all" ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(async () => {
    current = await openSupervisorFixture(kind, options);
  });
  after(async () => {
    const done = current;
    current = undefined;
    await done?.cleanup();
  });
  return {
    get ts() {
      return live().ts;
    },
    get tp() {
      return live().tp;
    },
    get board() {
      return live().board;
    },
    reproject: (o) => live().reproject(o),
  };
}
