import { beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EntrySchema } from "../../src/blackboard/index.js";
import { runCli } from "../helpers/proc.js";

const env = { ...process.env, PMAGENT_DATABASE_URL: "", PMAGENT_SQLITE_PATH: "", PMAGENT_ACTOR: "" };
let dir: string;
const pm = (args: string[], input?: string) => runCli(args, { cwd: dir, env, input });

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "pmagent-bb-"));
  await pm(["init", "--project-id", "vpm-mini"]);
});

describe("pmagent bb", () => {
  it("walks a cycle: post from flags, claim, heartbeat, done, history, show as the exact entry form", async () => {
    const post = await pm([
      "bb",
      "post",
      "--id",
      "e1",
      "--to",
      "Aya",
      "--kind",
      "doc_update_proposal_request",
      "--summary",
      "Refresh STATE",
      "--refs-json",
      '{"issue":571}',
      "--target-doc",
      "STATE/current_state.md#Layer B",
      "--source-issue",
      "571",
      "--format",
      "json",
    ]);
    expect(post.stderr).toBe("");
    const entry = EntrySchema.parse(JSON.parse(post.stdout));
    expect(entry).toMatchObject({
      id: "e1",
      from: "Human",
      to: "Aya",
      status: "open",
      payload: { summary: "Refresh STATE", refs: { issue: 571 } },
      target_docs: [{ path: "STATE/current_state.md", section: "Layer B" }],
      source_issue: 571,
    });

    const claim = await pm(["bb", "claim", "--role", "Aya", "--worker", "aya-1", "--format", "json"]);
    expect(JSON.parse(claim.stdout)).toMatchObject({ claimed_by: "aya-1", entry: { id: "e1", status: "in_progress" } });
    expect((await pm(["bb", "claim", "--role", "Aya"])).stdout).toBe("no open entry for Aya\n");
    expect((await pm(["bb", "heartbeat", "e1", "--worker", "aya-1"])).code).toBe(0);
    const lost = await pm(["bb", "heartbeat", "e1", "--worker", "aya-2"]);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toContain("entry e1: worker aya-2 does not hold its claim (in_progress, claimed by aya-1)");

    const done = await pm(["bb", "done", "e1", "--as", "Aya", "--worker", "aya-1"]);
    expect(done.stdout).toMatch(/^done: e1 {2}done {2}Human → Aya/);
    const history = await pm(["bb", "history", "e1", "--format", "json"]);
    expect(
      JSON.parse(history.stdout).items.map((h: { action: string; actor: string }) => `${h.actor}:${h.action}`),
    ).toEqual(["Human:post", "Aya:claim", "Aya:status"]);
    const show = await pm(["bb", "show", "e1", "--format", "json"]);
    expect(Object.keys(JSON.parse(show.stdout)).sort()).toEqual([
      "created_at",
      "from",
      "id",
      "kind",
      "payload",
      "project_id",
      "source_issue",
      "status",
      "target_docs",
      "to",
      "updated_at",
    ]);
  });

  it("posts the spec's JSON form from a file or standard input; re-posting is a no-op", async () => {
    const entry = {
      id: "vpm-mini-docupdate-issue571-1",
      from: "Human",
      to: "Aya",
      project_id: "vpm-mini",
      kind: "doc_update_proposal_request",
      payload: { summary: "s", details: {}, refs: {} },
      target_docs: ["STATE/current_state.md"],
    };
    writeFileSync(join(dir, "e.json"), JSON.stringify(entry));
    const a = await pm(["bb", "post", "e.json"]);
    expect(a.stdout).toMatch(/^posted: vpm-mini-docupdate-issue571-1 {2}open/);
    const b = await pm(["bb", "post", "-"], JSON.stringify(entry));
    expect(b.stdout).toMatch(/^already posted \(same content, nothing changed\)/);
    const c = await pm(["bb", "post", "-"], JSON.stringify({ ...entry, to: "Sho" }));
    expect(c.code).toBe(1);
    expect(c.stderr).toContain("entry vpm-mini-docupdate-issue571-1 already exists with different content (to differ)");
  });

  it.each([
    [["bb", "post"], 2, "bb post needs a FILE (or -) or at least --to and --kind"],
    [["bb", "post", "missing.json"], 2, "cannot read missing.json: ENOENT"],
    [
      ["bb", "post", "--to", "Aya", "--kind", "k", "--details-json", "[1]"],
      2,
      "--details-json expects a JSON object, got [1]",
    ],
    [["bb", "post", "--to", "Aya", "--kind", "k", "--refs-json", "{oops"], 2, "--refs-json is not valid JSON"],
    [
      ["bb", "post", "--to", "Aya", "--kind", "k", "--status", "waiting"],
      2,
      '$.status: Invalid option: expected one of "open"|"in_progress"|"done"|"error"|"canceled"',
    ],
    [
      ["bb", "list", "--status", "waiting"],
      2,
      "argument 'waiting' is invalid. Allowed choices are open, in_progress, done, error, canceled",
    ],
    [["bb", "list", "--limit", "ten"], 2, '--limit expects a whole number, got "ten"'],
    [
      ["bb", "claim", "--role", "Zed"],
      2,
      'role "Zed" is not configured in any lane (configured roles: Aya, Sho, Tsugu, Gen, Hana)',
    ],
    [["bb", "show", "nope"], 1, "entry nope does not exist in project vpm-mini"],
    [["bb", "update", "nope"], 2, "bb update needs at least one of --status, --to, --payload-json, --note"],
  ])("pmagent %j exits %i: %s", async (args, code, message) => {
    const r = await pm(args);
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(message);
  });

  it("a post from stdin with bad JSON names standard input", async () => {
    const r = await pm(["bb", "post", "-"], "{nope");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("standard input is not valid JSON");
  });

  it("refusals name the entry, the actor, the transition and why; stale writes are refused", async () => {
    await pm(["bb", "post", "--id", "e2", "--to", "Sho", "--kind", "doc_update_review_request"]);
    const r = await pm(["bb", "done", "e2", "--as", "Tsugu"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "entry e2: Tsugu may not move it open → done: only its writer (Human), its addressee (Sho) or a human (Human) may change it [permission_refused]",
    );
    expect((await pm(["bb", "cancel", "e2"])).code).toBe(0);
    const again = await pm(["bb", "update", "e2", "--status", "open"]);
    expect(again.stderr).toContain(
      "entry e2: Human cannot move it canceled → open (canceled is terminal) [transition_refused]",
    );
    await pm(["bb", "post", "--id", "e3", "--to", "Sho", "--kind", "doc_update_review_request"]);
    expect((await pm(["bb", "update", "e3", "--note", "n1", "--expect-version", "1"])).code).toBe(0);
    const stale = await pm(["bb", "update", "e3", "--note", "n2", "--expect-version", "1"]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain("entry e3 was changed by someone else (you had version 1, it is now at 2)");
  });

  it("exports JSON lines and imports them (array or JSON lines) into another project store, keeping status", async () => {
    await pm(["bb", "post", "--id", "x1", "--to", "Aya", "--kind", "doc_update_proposal_request"]);
    await pm(["bb", "post", "--id", "x2", "--to", "Sho", "--kind", "doc_update_review_request"]);
    await pm(["bb", "done", "x2"]);
    const exported = (await pm(["bb", "export"])).stdout;
    expect(
      exported
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).id),
    ).toEqual(["x1", "x2"]);
    const other = mkdtempSync(join(tmpdir(), "pmagent-bb2-"));
    await runCli(["init", "--project-id", "vpm-mini"], { cwd: other, env });
    const imp = await runCli(["bb", "import", "-", "--format", "json"], { cwd: other, env, input: exported });
    expect(JSON.parse(imp.stdout)).toEqual({ created: ["x1", "x2"], unchanged: [], refused: [] });
    const again = await runCli(["bb", "import", "-", "--format", "json"], {
      cwd: other,
      env,
      input: `[${exported.trim().split("\n").join(",")}]`,
    });
    expect(JSON.parse(again.stdout)).toEqual({ created: [], unchanged: ["x1", "x2"], refused: [] });
    const list = await runCli(["bb", "list", "--status", "done", "--format", "json"], { cwd: other, env });
    expect(JSON.parse(list.stdout).items.map((e: { id: string }) => e.id)).toEqual(["x2"]);
    const bad = await runCli(["bb", "import", "-"], { cwd: other, env, input: '{"id":"y"}\nnot json\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("standard input line 2 is not valid JSON");
    const invalid = await runCli(["bb", "import", "-"], { cwd: other, env, input: '{"id":"y"}\n' });
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain("entry 1 (y): standard input entry 1 is invalid:");
  });

  it("answers deep payloads, NUL in an id, in_progress posts and others' imports with a typed error, never a stack trace", async () => {
    const deep = `{"to":"Aya","kind":"k","payload":{"d":${"[".repeat(5000)}${"]".repeat(5000)}}}`;
    const cases: Array<[string[], string | undefined, number, string]> = [
      [
        ["bb", "post", "-"],
        deep,
        2,
        "standard input nests deeper than 64 levels of objects and arrays (MAX_JSON_DEPTH); flatten it [invalid_entry]",
      ],
      [
        ["bb", "import", "-"],
        `[${deep}]`,
        2,
        "standard input nests deeper than 64 levels of objects and arrays (MAX_JSON_DEPTH); flatten it [invalid_json]",
      ],
      [
        ["bb", "post", "-"],
        JSON.stringify({ id: "a\u0000b", to: "Aya", kind: "k" }),
        2,
        "$.id: must not contain U+0000 (NUL) [invalid_entry]",
      ],
      [
        ["bb", "post", "--to", "Aya", "--kind", "k", "--status", "in_progress"],
        undefined,
        2,
        "cannot be posted as in_progress: an entry becomes in_progress when a worker claims it; give it status open and it will be claimed [invalid_status]",
      ],
    ];
    for (const [args, input, code, message] of cases) {
      const r = await pm(args, input);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toContain("unexpected error");
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.code).toBe(code);
    }
    const entry = {
      id: "b1",
      from: "Bob",
      to: "Aya",
      project_id: "vpm-mini",
      kind: "k",
      status: "done",
      payload: {},
      target_docs: [],
      created_at: "2026-01-15T10:00:00Z",
      updated_at: "2026-01-15T10:00:00Z",
    };
    const refused = await pm(["bb", "import", "-", "--as", "Aya", "--format", "json"], JSON.stringify(entry));
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).refused).toEqual([
      {
        index: 1,
        id: "b1",
        reason: "Aya may not import entry b1 written by Bob: only a human (Human) imports others' entries as they were",
      },
    ]);
    const feb30 = await pm(
      ["bb", "import", "-", "--format", "json"],
      JSON.stringify({ ...entry, created_at: "2026-02-30T10:00:00Z" }),
    );
    expect(JSON.parse(feb30.stdout).refused[0].reason).toContain(
      "$.created_at: expected an ISO 8601 date-time with a time zone, naming a real date and time",
    );
    expect(
      JSON.parse((await pm(["bb", "import", "-", "--format", "json"], JSON.stringify(entry))).stdout).created,
    ).toEqual(["b1"]);
  });
});
