import { resolve } from "node:path";
import type { Blackboard } from "../blackboard/index.js";
import type { Config } from "../config/index.js";
import { collectLaneBoard, collectRuns, githubSource, type RunReaders } from "./evidence/index.js";
import type { KaiSources } from "./kai.js";

export interface KaiSourcesInput {
  config: Config;
  /** The repository to read git history and the STATE document from. */
  repo: string;
  board: Blackboard;
  /** The supervisor's runs, with their actions, environment proposals and local-forge pull requests. */
  readers: RunReaders;
  /** Where the GitHub token is read from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Every evidence source of a project: its repository, its blackboard, its supervisor runs and
 * GitHub when a token is configured. The CLI, the HTTP API and MCP all answer from these (the
 * composition root, src/app, builds the objects they read).
 */
export function kaiSources(input: KaiSourcesInput): KaiSources {
  const c = input.config;
  const gh = githubSource(c, input.env);
  return {
    repo: resolve(input.repo),
    // lane_status shows the latest and last completed cycles only: the window's other cycles are what_changed's.
    board: (w, lane, type) => collectLaneBoard(input.board, lane, c.humans, w, { windowed: type === "what_changed" }),
    runs: (w, lane, entryIds) => collectRuns(input.readers, lane, w, entryIds),
    github: gh.source,
    notes: gh.note ? [gh.note] : [],
  };
}
