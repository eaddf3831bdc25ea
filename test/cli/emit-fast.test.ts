import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PAYLOAD_KEYS, PAYLOAD_SCHEMAS, Sprite, EVENT_TYPES } from "../../src/lattice/index.js";
import { CLI_UNBUNDLED, REPO_ROOT, runProcess } from "../helpers/proc.js";

const TRACE = pathToFileURL(join(REPO_ROOT, "test/cli/fixtures/trace-imports.mjs")).href;
const stripTime = (line: string) => line.replace(/"timestamp":"[^"]+"/, '"timestamp":"T"');

/** `pmagent emit ARGS` in a fresh sprite workspace, with the modules it loaded (tsc's output, file by file). */
async function emit(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const workspace = mkdtempSync(join(tmpdir(), "pmagent-emit-fast-"));
  mkdirSync(join(workspace, ".lattice"));
  const trace = join(workspace, "imports.txt");
  const env = {
    PATH: process.env.PATH,
    LATTICE_SPRITE_ID: "sprite-1",
    LATTICE_WORK_ITEM_ID: "item-1",
    LATTICE_WORKSPACE: workspace,
    PMAGENT_TRACE_IMPORTS: trace,
    ...extraEnv,
  };
  const r = await runProcess(process.execPath, ["--import", TRACE, CLI_UNBUNDLED, "emit", ...args], { env });
  const loaded = readFileSync(trace, "utf8").split("\n").filter(Boolean);
  let outbox = "";
  try {
    outbox = readFileSync(join(workspace, ".lattice", "outbox.jsonl"), "utf8");
  } catch {
    // nothing written
  }
  return { ...r, loaded, outbox, workspace };
}

/** The line the sprite SDK (zod-checked) writes for the same payload. */
function sdkLine(
  type: (typeof EVENT_TYPES)[number],
  payload: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
): string {
  const workspace = mkdtempSync(join(tmpdir(), "pmagent-emit-sdk-"));
  let line = "";
  new Sprite({ spriteId: "sprite-1", workItemId: "item-1", workspace, env, write: (l) => (line = l) }).emit(
    type,
    payload as never,
  );
  return line;
}

describe("pmagent emit's fast path (before commander and zod load)", () => {
  it("keeps each payload's fields in its zod schema's order", () => {
    for (const type of EVENT_TYPES) expect(PAYLOAD_KEYS[type], type).toEqual(Object.keys(PAYLOAD_SCHEMAS[type].shape));
  });

  const cases: Array<[string[], (typeof EVENT_TYPES)[number], Record<string, unknown>]> = [
    [
      ["INFO", "--metadata-json", '{"b":1,"a":[2]}', "--kind", "progress", "--message", "Running tests"],
      "INFO",
      { message: "Running tests", kind: "progress", metadata: { b: 1, a: [2] } },
    ],
    [
      ["ARTIFACT", "--metadata-json", '{"x":true}', "--ref", "src/a.ts", "--kind", "file"],
      "ARTIFACT",
      { kind: "file", ref: "src/a.ts", metadata: { x: true } },
    ],
    [["phase-finished", "--phase", "test", "--failure"], "PHASE_FINISHED", { phase: "test", success: false }],
    [["COMPLETED", "--summary", "done", "--status", "success"], "COMPLETED", { status: "success", summary: "done" }],
    [
      ["ERROR", "--message", "boom", "--details-json", '{"z":1,"a":2}'],
      "ERROR",
      { message: "boom", details: { z: 1, a: 2 } },
    ],
  ];
  it.each(cases)(
    "emit %j prints and appends the SDK's line, loading neither commander, zod nor the store",
    async (args, type, payload) => {
      const r = await emit(args);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(stripTime(r.stdout)).toBe(stripTime(sdkLine(type, payload)));
      expect(`LATTICE_EVENT ${r.outbox}`).toBe(r.stdout);
      const heavy = r.loaded.filter((u) =>
        /\/node_modules\/|\/dist\/(store|blackboard|config)\/|\/dist\/cli\/program\.js|\/dist\/lattice\/(protocol|sprite)\//.test(
          u,
        ),
      );
      expect(heavy).toEqual([]);
    },
  );

  it("masks the environment's secrets as the SDK does", async () => {
    const secret = "sk-test-0123456789abcdefghij";
    const r = await emit(["INFO", "--message", `key ${secret}`], { OPENAI_API_KEY: secret });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(secret);
    expect(stripTime(r.stdout)).toBe(
      stripTime(sdkLine("INFO", { message: `key ${secret}` }, { OPENAI_API_KEY: secret })),
    );
  });

  it("leaves what it does not handle to the full command: defaults, --payload-json, bad values (its messages)", async () => {
    const action = await emit(["ACTION_REQUEST", "--action", "OPEN_PR"]);
    expect(action.code).toBe(0);
    expect(stripTime(action.stdout)).toBe(stripTime(sdkLine("ACTION_REQUEST", { action: "OPEN_PR" })));
    expect(action.loaded.some((u) => u.endsWith("/dist/cli/program.js"))).toBe(true);

    const json = await emit(["INFO", "--payload-json", '{"kind":"note","message":"m"}']);
    expect(json.code).toBe(0);
    expect(stripTime(json.stdout)).toBe(stripTime(sdkLine("INFO", { kind: "note", message: "m" })));

    const empty = await emit(["INFO", "--message", ""]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      "pmagent: INFO event is invalid:\n  payload.message (--message): must be a non-empty string [invalid_event]\n",
    );
    expect(empty.outbox).toBe("");

    const wrong = await emit(["INFO", "--message", "m", "--phase", "p"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toBe(
      "pmagent: --phase does not apply to INFO (it is for PHASE_STARTED, PHASE_FINISHED, ENVIRONMENT_PROPOSAL) [invalid_option]\n",
    );
    expect(wrong.outbox).toBe("");
  });
});
