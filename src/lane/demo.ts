/**
 * `pmagent demo`: one whole cycle of the doc_update lane in a fresh git repository — a Human
 * request, the built-in sprites run by a worker (real runs, workspaces, checkpoint and resume),
 * OPEN_PR through the local forge — then Kai's lane status and what-changed digests.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { plural, UnavailableError, UsageError, writeFileAtomic } from "../core/index.js";
import type { StoredEntry } from "../blackboard/index.js";
import { CONFIG_FILE } from "../config/index.js";
import { Worker, type RunRecord } from "../lattice/index.js";
import { openProject } from "../app/index.js";
import { answerText, type KaiResponse } from "../kai/index.js";
import { exampleLaneConfig } from "./example.js";

export const DEMO_REQUEST_ID = "demo-docupdate-1";

const STATE_DOC = `# Current state

## Layer A

The store, blackboard and supervisor run on SQLite and PostgreSQL.

## Layer B

The doc_update lane turns requests into reviewed documentation pull requests.

### Goals

- Keep STATE and docs in step with the code.
- Review every documentation change before it lands.

### Gaps

- The guide does not describe the review guard yet.
- No PM snapshot has been written this week.
`;

const GUIDE = `# Guide

This guide explains how a documentation request travels through the lane.

## Roles

- Aya proposes the updates.
- Sho reviews them.
- Tsugu applies them on a branch and opens a pull request.
- Gen writes the PM snapshot.
- Hana routes the finished cycle back to Human.

## Review

Sho refuses any update that would truncate a document.
`;

/** The Human request: one good update, one that truncates the guide, one outside the allowed paths. */
export function demoRequest(): { summary: string; details: Record<string, unknown> } {
  return {
    summary: "Record the lane's first full cycle in the STATE document",
    details: {
      request: "Note in STATE that the doc_update lane ran end to end, and shorten the guide.",
      updates: [
        {
          path: "STATE/current_state.md",
          reason: "the lane ran its first full cycle",
          change_type: "append",
          suggested_markdown:
            "### Progress\n\nThe first full doc_update cycle ran through pmagent: proposal, review, apply, pull request and PM snapshot.",
        },
        {
          path: "docs/guide.md",
          reason: "shorter guide",
          change_type: "replace",
          suggested_markdown: "# Guide\n\nThis guide explains how a documentation request travels through",
        },
        {
          path: "README.md",
          reason: "mention the lane in the README",
          change_type: "append",
          suggested_markdown: "The doc_update lane keeps STATE current.",
        },
      ],
    },
  };
}

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** A fresh repository with the sample STATE document, a guide and the example lane's config. */
export function createDemoRepository(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new UsageError(
      "demo_dir_not_empty",
      `--dir ${dir} is not empty: give a new or empty directory for the demo repository`,
    );
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(join(dir, "STATE/current_state.md"), STATE_DOC);
  writeFileAtomic(join(dir, "docs/guide.md"), GUIDE);
  writeFileAtomic(join(dir, "README.md"), "# Demo project\n\nA repository made by `pmagent demo`.\n");
  writeFileAtomic(join(dir, ".gitignore"), ".pmagent/\n");
  writeFileAtomic(join(dir, CONFIG_FILE), `${JSON.stringify(exampleLaneConfig("demo"), null, 2)}\n`);
  try {
    git(dir, ["init", "--quiet", "--initial-branch=main"]);
    git(dir, ["add", "--all"]);
    git(dir, [
      "-c",
      "user.name=Human",
      "-c",
      "user.email=human@pmagent.invalid",
      "commit",
      "--quiet",
      "-m",
      "Demo project: STATE document, guide and pmagent config",
    ]);
  } catch (err) {
    throw new UnavailableError(
      "git_failed",
      `cannot create the demo repository in ${dir} (is git installed?): ${((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`,
    );
  }
}

export interface DemoOptions {
  dir: string;
  out: (line?: string) => void;
  /** How sprites run pmagent (default: this process's CLI). */
  pmagentCommand?: string[];
  /** How the person who ran the demo invokes pmagent, for the closing hints (default `pmagent`). */
  invocation?: string;
  /** The cycle must finish within this time (default 120 s). */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface DemoResult {
  entries: StoredEntry[];
  runs: RunRecord[];
  laneStatus: KaiResponse;
  whatChanged: KaiResponse;
}

const pad = (s: string, n: number) => s.padEnd(n);

export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  createDemoRepository(o.dir);
  // The demo's store is the repository's own SQLite file, whatever PMAGENT_DATABASE_URL says.
  const opened = await openProject({ cwd: o.dir, env: o.env, storeOptions: { env: {} } });
  const { project, store } = opened;
  const lane = project.config.lanes[0]!;
  const { out } = o;
  try {
    const board = await opened.board();
    out(`pmagent demo — repository ${project.root} (project "${project.config.project_id}", SQLite ${store.location})`);
    out(`lane ${lane.layer}/${lane.name}: Human → ${lane.roles.map((r) => r.name).join(" → ")} → Human`);
    out();
    const request = demoRequest();
    await board.post("Human", {
      id: DEMO_REQUEST_ID,
      to: lane.roles[0]!.name,
      kind: lane.roles[0]!.allowed_kinds[0]!,
      payload: { ...request, refs: {} },
      target_docs: [lane.state_file, "docs/guide.md"],
    });
    out(`Human  posts  ${DEMO_REQUEST_ID}: ${request.summary} (3 updates)`);

    const supervisor = await opened.supervisor({
      pmagentCommand: o.pmagentCommand,
      consoleWrite: (line: string) => out(`  notify: ${line}`),
    });
    const runs: RunRecord[] = [];
    const worker = new Worker({
      supervisor,
      roles: lane.roles.map((r) => r.name),
      id: "demo-worker",
      once: true,
      onRun: (run) => {
        runs.push(run);
        out(
          `${pad(run.role, 6)} ${pad(run.state, 9)} ${pad(run.entry_id ?? "", 30)} run ${run.id} (${run.attempt} attempt${run.attempt > 1 ? "s" : ""})${run.reason ? `: ${run.reason}` : ""}`,
        );
      },
    });
    const timeoutMs = o.timeoutMs ?? 120_000;
    const stop = AbortSignal.timeout(timeoutMs);
    await worker.run(stop);
    if (stop.aborted)
      throw new UnavailableError(
        "demo_timeout",
        `the demo cycle did not finish within ${timeoutMs / 1000} s; look at \`pmagent runs\` in ${project.root}`,
      );

    const entries = await board.list();
    const done = entries.find(
      (e) => e.entry.to === "Human" && e.entry.from === lane.roles[lane.roles.length - 1]!.name,
    );
    if (!done)
      throw new UnavailableError(
        "demo_cycle_incomplete",
        `the cycle stopped before reaching Human: ${entries.map((e) => `${e.entry.id} ${e.entry.status}`).join(", ")}`,
      );
    out(`Hana   routes ${done.entry.id} to Human: ${String(done.entry.payload.summary ?? "")}`);
    await board.transition("Human", done.entry.id, "done", { note: "read by Human in the demo" });
    out(`Human  reads  ${done.entry.id} → done`);

    const sho = runs.find((r) => r.role === "Sho");
    if (sho) {
      out();
      out("Sho's review:");
      for (const e of await supervisor.runs.events(sho.id)) {
        const p = e.event.payload as { kind?: string; message?: string };
        if (e.event_type === "INFO" && p.kind === "review_decision") out(`  ${p.message}`);
      }
    }
    const forge = await opened.localForge();
    out();
    out("pull requests in the local forge:");
    for (const pr of await forge.list()) out(`  #${pr.number} ${pr.state} ${pr.head} → ${pr.base}: ${pr.title}`);

    const final = await board.list();
    const kai = async (type: "lane_status" | "what_changed") =>
      answerText(
        JSON.stringify({
          version: "kai_request_v1",
          request_id: `demo-${type}`,
          from: { actor_type: "human", actor_id: "pmagent-demo" },
          project_id: project.config.project_id,
          type,
          lane: { layer: lane.layer, name: lane.name },
          params: {},
        }),
        { config: project.config, sources: await opened.kaiSources() },
      );
    const laneStatus = await kai("lane_status");
    const whatChanged = await kai("what_changed");
    out();
    out("Kai — lane status:");
    out(laneStatus.summary_md);
    out();
    out("Kai — what changed:");
    out(whatChanged.summary_md);
    out();
    out(
      `${plural(final.length, "entry")}, ${final.filter((e) => e.entry.status === "done").length} done. Look around in ${project.root}:`,
    );
    const cli = o.invocation ?? "pmagent";
    out(`  cd ${project.root}`);
    out(`  ${cli} bb list · ${cli} runs list · ${cli} prs · git --git-dir .pmagent/forge.git log --stat --all`);
    return { entries: final, runs, laneStatus, whatChanged };
  } finally {
    await opened.close();
  }
}
