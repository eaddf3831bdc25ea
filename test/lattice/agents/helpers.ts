/** Shared by the coding-agent tests: a git project whose Builder role runs an agent, and a scan of the whole store. */
import type { StoredEvent } from "../../../src/lattice/index.js";
import type { TestStore } from "../../helpers/stores.js";
import { gitInit, testProject, type TestProject } from "../helpers.js";

/** Every row of every table of the test's database, as text. */
export async function databaseText(ts: TestStore): Promise<string> {
  const tables = ts.file
    ? await ts.store.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
    : await ts.store.all<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`,
      );
  const parts: string[] = [];
  for (const { name } of tables) parts.push(JSON.stringify(await ts.store.all(`SELECT * FROM ${name}`)));
  return parts.join("\n");
}

/** Lane Builder (runner: the agent) → Reviewer, in a git repository; `model.base_url` set when given. */
export function agentProject(
  ts: TestStore,
  runner: Record<string, unknown>,
  credentials: string[],
  modelBaseUrl?: string,
): TestProject {
  const tp = testProject(ts, {
    ...(modelBaseUrl ? { model: { base_url: modelBaseUrl } } : {}),
    lanes: [
      {
        layer: "test",
        name: "build",
        roles: [
          {
            name: "Builder",
            allowed_kinds: ["build_request"],
            runner: { timeout_s: 120, ...runner },
            credentials,
            next: { to: "Reviewer", kind: "review_request", id_suffix: "-review" },
          },
          { name: "Reviewer", allowed_kinds: ["review_request"] },
        ],
      },
    ],
  });
  gitInit(tp.root);
  return tp;
}

export const payloads = (events: StoredEvent[], type: string) =>
  events.filter((e) => e.event_type === type).map((e) => e.event.payload as Record<string, unknown>);
