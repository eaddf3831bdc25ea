import { resolve } from "node:path";
import { Blackboard } from "../blackboard/index.js";
import type { Project } from "../config/index.js";
import { ActionStore, ProposalStore, RunStore } from "../lattice/index.js";
import { LocalForge } from "../forge/index.js";
import type { Store } from "../store/index.js";
import { collectLaneBoard, collectRuns, githubSource } from "./evidence/index.js";
import type { KaiSources } from "./kai.js";

export interface ProjectSourcesOptions {
  /** The repository to read git history and the STATE document from (default: the project's root). */
  repo?: string;
  /** Where the GitHub token is read from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Every evidence source of a project: its repository, its blackboard, its supervisor runs (with
 * their actions, environment proposals and local-forge pull requests) and GitHub when a token is
 * configured. The CLI, the HTTP API and MCP all answer from these.
 */
export function projectKaiSources(project: Project, store: Store, options: ProjectSourcesOptions = {}): KaiSources {
  const c = project.config;
  const gh = githubSource(c, options.env);
  const board = new Blackboard(store, { projectId: c.project_id, humans: c.humans });
  const readers = {
    runs: new RunStore(store, c.project_id),
    actions: new ActionStore(store),
    proposals: new ProposalStore({ store, projectId: c.project_id, humans: c.humans }),
    forge: new LocalForge({ store, projectId: c.project_id, root: project.root, bareRepo: c.forge.bare_repo, remote: c.forge.remote }),
  };
  return {
    repo: resolve(options.repo ?? project.root),
    // lane_status shows the latest and last completed cycles only: the window's other cycles are what_changed's.
    board: (w, lane, type) => collectLaneBoard(board, lane, c.humans, w, { windowed: type === "what_changed" }),
    runs: (w, lane, entryIds) => collectRuns(readers, lane, w, entryIds),
    github: gh.source,
    notes: gh.note ? [gh.note] : [],
  };
}
