import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BlackboardCommentError, parseComment, renderComment } from "../../src/blackboard/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { testBoard } from "../helpers/blackboard.js";

const fixtures = join(import.meta.dirname, "fixtures");
const fixture = (name: string) => JSON.parse(readFileSync(join(fixtures, name), "utf8")) as Record<string, unknown>;
const withRef = fixture("aya-request-payload-ref.json");
const compat = fixture("aya-request-compat.json");

describe("entries in the origin's shapes (codec)", () => {
  it("keeps payload_ref and any other top-level field through parse and render, bare and fenced", () => {
    const bare = renderComment(withRef as never);
    expect(bare).toContain('"payload_ref": {');
    const decoded = parseComment(bare)!;
    expect(decoded.entry).toEqual(withRef);
    const fenced = `<!-- blackboard:doc_update_v1 -->\n\`\`\`json\n${JSON.stringify({ ...withRef, review_mode: "auto_accept_v1" })}\n\`\`\``;
    expect(parseComment(fenced)!.entry).toEqual({ ...withRef, review_mode: "auto_accept_v1" });
    // The spec's own fields stay strict.
    expect(() => parseComment(renderComment({ ...withRef, status: "finished" } as never))).toThrow(
      /\$\.status: Invalid option/,
    );
  });

  it("reads the Human → Aya compatibility set of the implementation notes (payload_ref, no payload/target_docs/updated_at)", () => {
    const body = `<!-- blackboard:doc_update_v1 -->\njson\n${JSON.stringify(compat)}`; // no empty line: §6.2 accepts it
    const { entry } = parseComment(body)!;
    expect(entry).toMatchObject({ ...compat, payload: {}, target_docs: [], updated_at: compat.created_at });
    expect(parseComment(renderComment(entry))!.entry).toEqual(entry);
  });

  it("reads the origin Sho workflow's comment: fenced, payload_ref naming a GitHub Actions artifact, no payload/target_docs/updated_at", () => {
    const sho = {
      id: "2025-11-30T05:12:09.511Z_vpm-mini_shotoaya_19793359086",
      from: "Sho",
      to: "Aya",
      project_id: "vpm-mini",
      kind: "doc_update_review_result",
      payload_ref: {
        type: "actions_artifact",
        workflow_run_id: 19793359086,
        artifact_name: "doc_update_review_v1_19793359086",
      },
      in_reply_to: "vpm-mini-docupdate-review-issue571-1",
      status: "done",
      created_at: "2025-11-30T05:12:09.511Z",
    };
    const { entry } = parseComment(
      `<!-- blackboard:doc_update_v1 -->\n\`\`\`json\n${JSON.stringify(sho, null, 2)}\n\`\`\``,
    )!;
    expect(entry).toEqual({ ...sho, payload: {}, target_docs: [], updated_at: sho.created_at });
    // A payload_ref of another form fills nothing in.
    expect(() =>
      parseComment(
        `<!-- blackboard:doc_update_v1 -->\n\njson\n${JSON.stringify({ ...sho, payload_ref: { type: "actions_artifact" } })}`,
      ),
    ).toThrow(/\$\.payload: Invalid input/);
  });

  it("without payload_ref, a missing payload is still refused", () => {
    const { payload_ref: _ref, ...plain } = compat;
    expect(() => parseComment(`<!-- blackboard:doc_update_v1 -->\n\njson\n${JSON.stringify(plain)}`)).toThrow(
      BlackboardCommentError,
    );
    expect(() => parseComment(`<!-- blackboard:doc_update_v1 -->\n\njson\n${JSON.stringify(plain)}`)).toThrow(
      /\$\.payload: Invalid input: expected record, received undefined/,
    );
  });

  it("refuses a time stamp without a zone, saying it has none", () => {
    const body = renderComment({ ...withRef, created_at: "2025-11-30T02:30:00" } as never);
    expect(() => parseComment(body)).toThrow(
      '$.created_at: "2025-11-30T02:30:00" has no time zone: add one (Z or ±hh:mm), e.g. 2025-11-30T02:30:00+09:00',
    );
    expect(() => parseComment(renderComment({ ...withRef, updated_at: "yesterday" } as never))).toThrow(
      "$.updated_at: expected an ISO 8601 date-time with a time zone",
    );
  });
});

const kinds = await availableStoreKinds();

describe.each(kinds)("entries in the origin's shapes ($name)", (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => t.cleanup());

  it("stores payload_ref as it came (import and post), lists it, and a re-import is unchanged", async () => {
    const { board } = testBoard(t.store);
    const put = await board.put("Human", withRef);
    expect(put.outcome).toBe("created");
    expect((await board.get(withRef.id as string)).entry).toEqual(withRef);
    expect((await board.put("Human", withRef)).outcome).toBe("unchanged");
    // A different payload_ref is different content.
    await expect(board.put("Human", { ...withRef, payload_ref: { kind: "path", value: "other.md" } })).rejects.toThrow(
      /already exists with different content \(payload_ref differ\)/,
    );
    const posted = await board.post("Aya", {
      to: "Sho",
      kind: "doc_update_review_request",
      payload_ref: { value: "reports/x.json" },
    });
    expect((await board.get(posted.stored.entry.id)).entry.payload_ref).toEqual({ value: "reports/x.json" });
    // A status change keeps it.
    const changed = await board.transition("Aya", withRef.id as string, "done");
    expect(changed.entry.payload_ref).toEqual(withRef.payload_ref);
    expect((await board.get(withRef.id as string)).entry.payload_ref).toEqual(withRef.payload_ref);
  });

  it("imports the compatibility set with its defaults filled in", async () => {
    const { board } = testBoard(t.store);
    await board.put("Human", compat);
    expect((await board.get(compat.id as string)).entry).toEqual({
      ...compat,
      payload: {},
      target_docs: [],
      updated_at: compat.created_at,
    });
  });
});
