import { Option, type Command } from "./commander.js";
import { hostname } from "node:os";
import {
  entrySummary,
  storedProjects,
  STATUSES,
  type Blackboard,
  type EntryInput,
  type HistoryRecord,
  type Status,
  type StoredEntry,
} from "../blackboard/light/index.js";
import { findRole, localActor, type Project } from "../config/light/index.js";
import { UsageError, parseJsonText } from "../core/index.js";
import { DEFAULT_PAGE_LIMIT } from "../store/index.js";
import type { OpenProject } from "../app/project/index.js";
import { withStore } from "./context.js";
import { registerBbSync } from "./bb-sync.js";
import {
  formatOption,
  intOption,
  pageOptions,
  print,
  printPage,
  readInput,
  type Format,
  type PageOpts,
} from "./output.js";

interface ActorOpts {
  as?: string;
  format: Format;
}

function actorOf(p: Project, opts: { as?: string }): string {
  return localActor(p.config, opts.as);
}

interface ProjectOpts {
  project?: string;
  allProjects?: boolean;
}

const projectOptions = (cmd: Command): Command =>
  cmd
    .addOption(
      new Option(
        "--project <id>",
        "another project's entries (a board issue may hold several projects' entries; default: this project)",
      ).conflicts("allProjects"),
    )
    .option("--all-projects", "the entries of every project in the store");

/** The blackboards `--project` / `--all-projects` select: this project's by default. */
async function selectedBoards(o: OpenProject, opts: ProjectOpts): Promise<Blackboard[]> {
  if (opts.allProjects) return Promise.all((await storedProjects(o.store)).map((id) => o.board(id)));
  return [await o.board(opts.project)];
}

export function entryLine(s: StoredEntry): string {
  const e = s.entry;
  const title = entrySummary(e);
  const summary = title !== null ? `  ${title}` : "";
  return `${e.id}  ${e.status}  ${e.from} → ${e.to}  ${e.kind}${summary}`;
}

function entryText(s: StoredEntry): string {
  const e = s.entry;
  const lines = [
    `id:          ${e.id}`,
    `status:      ${e.status} (version ${s.version}${s.claimed_by ? `, claimed by ${s.claimed_by} until ${s.lease_expires_at}` : ""})`,
    `from → to:   ${e.from} → ${e.to}`,
    `kind:        ${e.kind}`,
    `project:     ${e.project_id}`,
    `created:     ${e.created_at}`,
    `updated:     ${e.updated_at}`,
  ];
  if (e.target_docs.length > 0)
    lines.push(
      `target_docs: ${e.target_docs.map((t) => (typeof t === "string" ? t : t.section ? `${t.path} (${t.section})` : t.path)).join(", ")}`,
    );
  for (const k of ["source_issue", "source_comment_id", "source_run_id", "note"] as const)
    if (e[k] !== undefined) lines.push(`${`${k}:`.padEnd(13)}${e[k]}`);
  lines.push(`payload:     ${JSON.stringify(e.payload, null, 2).replace(/\n/g, "\n             ")}`);
  return lines.join("\n");
}

function historyLine(h: HistoryRecord): string {
  const fields = Object.keys(h.changes).filter((k) => k !== "entry");
  return `${h.at}  ${h.entry_id}  ${h.actor}  ${h.action}  ${h.from_status ?? "∅"} → ${h.to_status}${fields.length ? `  (${fields.join(", ")})` : ""}`;
}

function jsonFlag(flag: string): (v: string) => Record<string, unknown> {
  return (v: string) => {
    const value = parseJsonText(v, flag, "invalid_option");
    if (value === null || typeof value !== "object" || Array.isArray(value))
      throw new UsageError("invalid_option", `${flag} expects a JSON object, got ${v}`);
    return value as Record<string, unknown>;
  };
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** `path` or `path#section` → a target_docs item; all path form unless a section is given. */
function targetDocs(values: string[]): EntryInput["target_docs"] {
  if (values.every((v) => !v.includes("#"))) return values;
  return values.map((v) => {
    const i = v.indexOf("#");
    return i < 0 ? { path: v } : { path: v.slice(0, i), section: v.slice(i + 1) };
  });
}

const asOption = () =>
  new Option("--as <actor>", "acting identity (default: $PMAGENT_ACTOR, else the first configured human)");
const versionOption = () =>
  new Option(
    "--expect-version <n>",
    "refuse the write unless the entry is still at this version (optimistic concurrency)",
  ).argParser(intOption("--expect-version", 1));

export function registerBb(program: Command): void {
  const bb = program.command("bb").description("the blackboard: post, claim, update and inspect entries");

  bb.command("post")
    .description(
      "post an entry: from FILE or - (the spec's JSON form; id, status and timestamps filled in when absent), or from flags",
    )
    .argument("[file]", "entry JSON file, or - for standard input")
    .addOption(asOption())
    .option("--id <id>", "entry id (default: generated)")
    .option("--to <role>", "addressee role")
    .option("--kind <kind>", "kind of processing")
    .option("--summary <text>", "payload.summary")
    .option("--details-json <json>", "payload.details as a JSON object", jsonFlag("--details-json"))
    .option("--refs-json <json>", "payload.refs as a JSON object", jsonFlag("--refs-json"))
    .option("--payload-json <json>", "the whole payload as a JSON object", jsonFlag("--payload-json"))
    .option("--target-doc <path[#section]>", "a target document (repeatable)", collect, [])
    .option("--status <status>", "initial status (default open)")
    .option("--note <text>", "a free remark")
    .option("--source-issue <n>", "linked GitHub issue")
    .option("--source-comment-id <id>", "linked GitHub comment")
    .option("--source-run-id <id>", "linked Actions run")
    .addOption(formatOption())
    .action(async (file: string | undefined, opts: ActorOpts & Record<string, unknown>, cmd: Command) => {
      let input: unknown;
      if (file !== undefined) {
        input = parseJsonText(await readInput(file), file === "-" ? "standard input" : file, "invalid_entry");
      } else {
        if (!opts.to || !opts.kind)
          throw new UsageError("missing_option", "bb post needs a FILE (or -) or at least --to and --kind");
        const payload: Record<string, unknown> = { ...((opts.payloadJson as Record<string, unknown>) ?? {}) };
        if (opts.summary !== undefined) payload.summary = opts.summary;
        if (opts.detailsJson !== undefined) payload.details = opts.detailsJson;
        if (opts.refsJson !== undefined) payload.refs = opts.refsJson;
        const e: Record<string, unknown> = {
          to: opts.to,
          kind: opts.kind,
          payload,
          target_docs: targetDocs(opts.targetDoc as string[]),
        };
        for (const [flag, key] of [
          ["id", "id"],
          ["status", "status"],
          ["note", "note"],
          ["sourceIssue", "source_issue"],
          ["sourceCommentId", "source_comment_id"],
          ["sourceRunId", "source_run_id"],
        ] as const) {
          if (opts[flag] !== undefined)
            e[key] = key === "source_issue" && /^\d+$/.test(String(opts[flag])) ? Number(opts[flag]) : opts[flag];
        }
        input = e;
      }
      await withStore(cmd, async (p, _store, o) => {
        const { stored, created } = await (await o.board()).post(actorOf(p, opts), input, file ?? "entry");
        print(
          opts.format,
          stored.entry,
          () => `${created ? "posted" : "already posted (same content, nothing changed)"}: ${entryLine(stored)}`,
        );
      });
    });

  pageOptions(projectOptions(bb.command("list")), "oldest")
    .description(
      "list entries in creation order, a page at a time (this project's, unless --project or --all-projects)",
    )
    .addOption(new Option("--status <status>", "only this status").choices([...STATUSES]))
    .option("--to <role>", "only entries addressed to this role")
    .option("--from <actor>", "only entries written by this actor")
    .option("--kind <kind>", "only this kind")
    .addOption(formatOption())
    .action(
      async (
        opts: ProjectOpts & PageOpts & { status?: Status; to?: string; from?: string; kind?: string; format: Format },
        cmd: Command,
      ) => {
        await withStore(cmd, async (p, _store, o) => {
          const filter = { status: opts.status, to: opts.to, from: opts.from, kind: opts.kind };
          const request = { limit: opts.limit, order: opts.order, cursor: opts.cursor };
          if (!opts.allProjects) {
            const page = await (await o.board(opts.project)).page(filter, request);
            printPage(opts.format, page, entryLine, "no entries", (s) => s.entry);
            return;
          }
          // Every project's board: the first page of each; a cursor belongs to one project's list.
          if (opts.cursor !== undefined)
            throw new UsageError(
              "invalid_option",
              "--cursor pages one project's entries: pass --project ID with it instead of --all-projects",
            );
          const boards = await selectedBoards(o, opts);
          const pages = await Promise.all(
            boards.map((b) => b.page(filter, { ...request, limit: request.limit ?? DEFAULT_PAGE_LIMIT })),
          );
          const entries = pages.flatMap((pg) => pg.items);
          const more = pages.flatMap((pg, i) =>
            pg.next === null ? [] : [{ project: boards[i]!.projectId, next: pg.next }],
          );
          print(opts.format, { items: entries.map((s) => s.entry), next: null, more }, () =>
            [
              ...(entries.length ? entries.map((s) => `[${s.entry.project_id}] ${entryLine(s)}`) : ["no entries"]),
              ...more.map((m) => `more of ${m.project}: --project ${m.project} --cursor ${m.next}`),
            ].join("\n"),
          );
        });
      },
    );

  bb.command("show")
    .description("show one entry")
    .argument("<id>", "entry id")
    .addOption(formatOption())
    .action(async (id: string, opts: { format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        const s = await (await o.board()).get(id);
        // A run the gate denied never started: its last DENY is shown here, with how to lift it.
        const gate = await (await o.runs()).lastGateDecision(id);
        const denied =
          gate?.decision === "DENY"
            ? `\ngate:        DENY at ${gate.at} (entry version ${gate.entry_version}): ${gate.reasoning}`
            : "";
        print(opts.format, s.entry, () => entryText(s) + denied);
      });
    });

  bb.command("claim")
    .description(
      "atomically claim the oldest open entry for ROLE (its pick rule), or take over one whose lease expired",
    )
    .requiredOption("--role <role>", "the role to claim for")
    .option("--worker <id>", "claimer identity (default ROLE@host:pid)")
    .option("--lease-ms <ms>", "lease length", intOption("--lease-ms", 1000))
    .addOption(formatOption())
    .action(async (opts: { role: string; worker?: string; leaseMs?: number; format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        const { role } = findRole(p.config, opts.role);
        const worker = opts.worker ?? `${role.name}@${hostname()}:${process.pid}`;
        const s = await (await o.board()).claim(worker, role.name, role.allowed_kinds, opts.leaseMs);
        print(
          opts.format,
          s
            ? { entry: s.entry, claimed_by: s.claimed_by, lease_expires_at: s.lease_expires_at, version: s.version }
            : null,
          () =>
            s ? `claimed by ${worker} until ${s.lease_expires_at}: ${entryLine(s)}` : `no open entry for ${role.name}`,
        );
      });
    });

  bb.command("heartbeat")
    .description("extend the lease of a claim (refused when the claim was lost)")
    .argument("<id>", "entry id")
    .requiredOption("--worker <id>", "the claimer identity used for the claim")
    .option("--lease-ms <ms>", "lease length", intOption("--lease-ms", 1000))
    .addOption(formatOption())
    .action(async (id: string, opts: { worker: string; leaseMs?: number; format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        const s = await (await o.board()).heartbeat(opts.worker, id, opts.leaseMs);
        print(
          opts.format,
          { entry: s.entry, claimed_by: s.claimed_by, lease_expires_at: s.lease_expires_at, version: s.version },
          () => `lease of ${id} extended until ${s.lease_expires_at}`,
        );
      });
    });

  bb.command("update")
    .description("change an entry's status and/or fields")
    .argument("<id>", "entry id")
    .addOption(asOption())
    .addOption(new Option("--status <status>", "new status").choices([...STATUSES]))
    .option("--to <role>", "new addressee")
    .option("--payload-json <json>", "replace the payload", jsonFlag("--payload-json"))
    .option("--note <text>", "set the note")
    .addOption(versionOption())
    .addOption(formatOption())
    .action(
      async (
        id: string,
        opts: ActorOpts & {
          status?: Status;
          to?: string;
          payloadJson?: Record<string, unknown>;
          note?: string;
          expectVersion?: number;
        },
        cmd: Command,
      ) => {
        const patch = {
          ...(opts.status ? { status: opts.status } : {}),
          ...(opts.to ? { to: opts.to } : {}),
          ...(opts.payloadJson ? { payload: opts.payloadJson } : {}),
          ...(opts.note !== undefined ? { note: opts.note } : {}),
        };
        if (Object.keys(patch).length === 0)
          throw new UsageError(
            "missing_option",
            "bb update needs at least one of --status, --to, --payload-json, --note",
          );
        await withStore(cmd, async (p, _store, o) => {
          const s = await (
            await o.board()
          ).change(actorOf(p, opts), id, patch, { expectedVersion: opts.expectVersion });
          print(opts.format, s.entry, () => `updated: ${entryLine(s)}`);
        });
      },
    );

  for (const [name, status, what] of [
    ["done", "done", "mark an entry done"],
    ["error", "error", "mark an entry failed"],
    ["cancel", "canceled", "cancel an entry"],
  ] as const) {
    bb.command(name)
      .description(what)
      .argument("<id>", "entry id")
      .addOption(asOption())
      .option("--note <text>", "why (kept in the entry's note)")
      .option("--worker <id>", "as the claimer of the entry: refused if the claim was lost")
      .addOption(versionOption())
      .addOption(formatOption())
      .action(
        async (
          id: string,
          opts: ActorOpts & { note?: string; worker?: string; expectVersion?: number },
          cmd: Command,
        ) => {
          await withStore(cmd, async (p, _store, o) => {
            const s = await (
              await o.board()
            ).transition(actorOf(p, opts), id, status, {
              note: opts.note,
              worker: opts.worker,
              expectedVersion: opts.expectVersion,
            });
            print(opts.format, s.entry, () => `${status}: ${entryLine(s)}`);
          });
        },
      );
  }

  pageOptions(bb.command("history"), "oldest")
    .description("the append-only history of one entry, or of the whole blackboard, a page at a time")
    .argument("[id]", "entry id")
    .addOption(formatOption())
    .action(async (id: string | undefined, opts: PageOpts & { format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        const h = await (
          await o.board()
        ).historyPage(id, { limit: opts.limit, order: opts.order, cursor: opts.cursor });
        printPage(opts.format, h, historyLine, "no history");
      });
    });

  projectOptions(bb.command("export"))
    .description("write every entry as JSON lines (the spec's form, every field kept)")
    .addOption(new Option("--status <status>", "only this status").choices([...STATUSES]))
    .action(async (opts: ProjectOpts & { status?: Status }, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        for (const b of await selectedBoards(o, opts))
          for (const s of await b.list({ status: opts.status })) process.stdout.write(`${JSON.stringify(s.entry)}\n`);
      });
    });

  bb.command("import")
    .description(
      "import entries (a JSON array, JSON lines, or GitHub comment bodies in the comment form, bare or fenced, as pasted), keeping their status and timestamps; each into its own project; existing ids with the same content are skipped; bad comments are reported as sync reports them",
    )
    .argument("<file>", "file, or - for standard input")
    .addOption(asOption())
    .addOption(formatOption())
    .action(async (file: string, opts: ActorOpts, cmd: Command) => {
      const source = file === "-" ? "standard input" : file;
      // The comment codec (GitHub side, zod) only for an import.
      const { readImportText } = await import("../blackboard/index.js");
      const read = readImportText(await readInput(file), source);
      await withStore(cmd, async (p, _store, o) => {
        // An entry of another project (one board issue may hold several) goes to that project's blackboard.
        const boardOf = (item: unknown): Promise<Blackboard> => {
          const id =
            item && typeof item === "object" && typeof (item as { project_id?: unknown }).project_id === "string"
              ? (item as { project_id: string }).project_id
              : p.config.project_id;
          return o.board(id);
        };
        const report = {
          created: [] as string[],
          unchanged: [] as string[],
          refused: [] as Array<{ index: number; id?: string; reason: string }>,
          ...(read.form === "comments" ? { bad_comments: read.bad_comments } : {}),
        };
        for (const [index, item] of read.items.entries()) {
          try {
            const { stored, outcome } = await (
              await boardOf(item)
            ).import(actorOf(p, opts), item, { source: `${source} entry ${index + 1}` });
            (outcome === "created" ? report.created : report.unchanged).push(stored.entry.id);
          } catch (err) {
            const id =
              item && typeof item === "object" && typeof (item as { id?: unknown }).id === "string"
                ? (item as { id: string }).id
                : undefined;
            report.refused.push({ index: index + 1, ...(id ? { id } : {}), reason: (err as Error).message });
          }
        }
        print(opts.format, report, () =>
          [
            `imported ${report.created.length}, unchanged ${report.unchanged.length}, refused ${report.refused.length}${read.form === "comments" ? `, bad comments ${read.bad_comments.length}` : ""}`,
            ...report.refused.map((r) => `  entry ${r.index}${r.id ? ` (${r.id})` : ""}: ${r.reason}`),
            ...read.bad_comments.map((b) => `  bad comment ${b.comment} (line ${b.line}): ${b.reason}`),
          ].join("\n"),
        );
        if (report.refused.length > 0 || read.bad_comments.length > 0) process.exitCode = 1;
      });
    });

  registerBbSync(bb);
}
