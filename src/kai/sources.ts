import { resolve } from "node:path";
import type { Blackboard } from "../blackboard/index.js";
import { allRoles, type Config } from "../config/light/index.js";
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
  /** The blackboard and run readers of another project living in the same repository (and store). */
  projectReaders?: (projectId: string) => Promise<{ board: Blackboard; readers: RunReaders }>;
}

/**
 * Every evidence source of a project: its repository, its blackboard, its supervisor runs and
 * GitHub when a token is configured. The CLI, the HTTP API and MCP all answer from these (the
 * composition root, src/app, builds the objects they read).
 */
export function kaiSources(input: KaiSourcesInput): KaiSources {
  const c = input.config;
  const gh = githubSource(c, input.env);
  const readersOf = input.projectReaders;
  return {
    repo: resolve(input.repo),
    ...boardAndRuns(c, input.board, input.readers),
    github: gh.source,
    notes: gh.note ? [gh.note] : [],
    ...(readersOf
      ? {
          project: async (id: string) => {
            const r = await readersOf(id);
            return boardAndRuns(c, r.board, r.readers);
          },
        }
      : {}),
  };
}

function boardAndRuns(c: Config, board: Blackboard, readers: RunReaders): Pick<KaiSources, "board" | "runs"> {
  return {
    // lane_status shows the latest and last completed cycles only: the window's other cycles are what_changed's.
    board: (w, lane, type) => collectLaneBoard(board, lane, c.humans, w, { windowed: type === "what_changed" }),
    // what_changed counts every run of the project in the window, whatever its lane.
    runs: (w, lane, entryIds, type) =>
      collectRuns(
        readers,
        lane,
        w,
        entryIds,
        type === "what_changed" ? allRoles(c).map((r) => r.role.name) : undefined,
      ),
  };
}
