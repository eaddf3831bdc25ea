/**
 * A sprite under test, run as pmagent runs it: a throwaway project (one role, an embedded SQLite
 * store, a git repository with the given files), the entry posted, the command supervised to its
 * end, its events and record returned; a WAITING run can be resumed with inputs. For a user's own
 * tests of the sprites and agent set-ups they write, as openai-agents-js ships its scripted model.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { openProject, type OpenProject } from "../app/index.js";
import { UsageError } from "../core/index.js";
import { git } from "../forge/index.js";
import type { RunRecord, StoredEvent, Supervisor } from "../lattice/index.js";

/** The one role of a harness project, and the kind of entry it takes. */
export const HARNESS_ROLE = "Sprite";
export const HARNESS_KIND = "task";

export interface SpriteHarnessOptions {
  /** The sprite's argv, as a role's `runner.command` would give it. */
  command: string[];
  /** Files of the repository the sprite works in, committed on main (default: a README). */
  files?: Record<string, string>;
  /** The entry's payload: what the sprite is asked to do. */
  payload?: Record<string, unknown>;
  /** More of the project's config (e.g. `humans`, a role's `credentials` under `role`). */
  role?: Record<string, unknown>;
  /** The supervisor's environment (what the role's allow-list and credentials read). */
  env?: NodeJS.ProcessEnv;
  timeoutS?: number;
}

export interface SpriteRun {
  run: RunRecord;
  events: StoredEvent[];
}

export interface SpriteHarness extends SpriteRun {
  /** The project directory (the repository; runs' workspaces are under `.pmagent/`). */
  root: string;
  /** Resume the WAITING run with inputs; the next attempt's record and all the run's events. */
  resume(inputs: Record<string, unknown>, context?: Record<string, unknown>): Promise<SpriteRun>;
  /** Close the store and remove the project. */
  close(): Promise<void>;
}

/** Run `command` as a sprite of a fresh project and wait for it to stop (done, failed or waiting). */
export async function runSprite(options: SpriteHarnessOptions): Promise<SpriteHarness> {
  if (options.command.length === 0)
    throw new UsageError(
      "invalid_command",
      'runSprite needs a command: the sprite\'s argv, e.g. ["node", "sprite.mjs"]',
    );
  const root = mkdtempSync(join(tmpdir(), "pmagent-sprite-"));
  let opened: OpenProject | undefined;
  try {
    const files = options.files ?? { "README.md": "# sprite under test\n" };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const config = {
      project_id: "sprite-harness",
      humans: ["Human"],
      lanes: [
        {
          layer: "test",
          name: "harness",
          roles: [
            {
              name: HARNESS_ROLE,
              allowed_kinds: [HARNESS_KIND],
              runner: { command: options.command, ...(options.timeoutS ? { timeout_s: options.timeoutS } : {}) },
              ...options.role,
            },
          ],
        },
      ],
    };
    writeFileSync(join(root, "pmagent.config.json"), `${JSON.stringify(config, null, 2)}\n`);
    writeFileSync(join(root, ".gitignore"), ".pmagent/\n");
    const id = ["-c", "user.name=pmagent harness", "-c", "user.email=harness@example.invalid"];
    await git(["init", "-q", "-b", "main"], { cwd: root });
    await git(["add", "."], { cwd: root });
    await git([...id, "commit", "-q", "-m", "the sprite's repository"], { cwd: root });

    opened = await openProject({ cwd: root, env: options.env ?? process.env });
    const supervisor: Supervisor = await opened.supervisor();
    const board = await opened.board();
    const entry = await board.post("Human", {
      to: HARNESS_ROLE,
      kind: HARNESS_KIND,
      payload: options.payload ?? { summary: "the task under test" },
    });
    const first = await supervisor.whenIdle(
      (await supervisor.startRun({ role: HARNESS_ROLE, entryId: entry.stored.entry.id })).id,
    );
    const project = opened;
    const read = async (run: RunRecord): Promise<SpriteRun> => ({ run, events: await supervisor.runs.events(run.id) });
    return {
      root,
      ...(await read(first)),
      async resume(inputs, context) {
        const resumed = await supervisor.resumeRun(first.id, { inputs, ...(context ? { context } : {}) });
        await resumed.finished;
        return read(await supervisor.whenIdle(first.id));
      },
      async close() {
        await project.close();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await opened?.close();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}
