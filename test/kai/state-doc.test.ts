import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  collectStateDoc,
  laneSectionIndex,
  parseSections,
  repoCycles,
  stateDocPath,
  stateView,
} from "../../src/kai/index.js";
import { TestRepo } from "./repo.js";

const lane = { layer: "layer_b", name: "doc_update" };

describe("STATE document collector", () => {
  const repo = new TestRepo();
  const shas: Record<string, string> = {};
  beforeAll(() => {
    shas.v1 = repo.commit("2026-01-01T00:00:00Z", "v1", {
      "STATE/vpm-mini/current_state.md":
        "# 現在の状態\n\n## Layer B（doc_update）\n\n- 状態: cycle-1 完了\n\n### ギャップ\n\n- PM Snapshot 未反映\n",
    });
    shas.other = repo.commit("2026-01-03T00:00:00Z", "unrelated", { "src/x.ts": "x" });
    shas.v2 = repo.commit("2026-01-05T00:00:00Z", "v2", {
      "STATE/vpm-mini/current_state.md": "# State\n\n## Layer A\n\nnothing\n",
    });
  });
  afterAll(() => repo.cleanup());

  it("reads the document as committed at the cutoff, with when it last changed", async () => {
    const doc = await collectStateDoc(repo.dir, "STATE/vpm-mini/current_state.md", new Date("2026-01-04T00:00:00Z"));
    expect(doc).toMatchObject({ exists: true, revision: shas.v1, updated_at: "2026-01-01T00:00:00.000Z" });
    expect(doc.sections.map((s) => s.anchor)).toEqual(["現在の状態", "layer-bdoc_update", "ギャップ"]);
    expect(stateView(doc, lane)).toEqual({
      state_file: "STATE/vpm-mini/current_state.md",
      section_anchor: "#layer-bdoc_update",
      digest: "状態: cycle-1 完了",
      known_gaps: ["PM Snapshot 未反映"],
      updated_at: "2026-01-01T00:00:00.000Z",
    });
    const now = await collectStateDoc(repo.dir, "STATE/vpm-mini/current_state.md", new Date("2026-02-01T00:00:00Z"));
    expect(now).toMatchObject({ revision: shas.v2, updated_at: "2026-01-05T00:00:00.000Z" });
    expect(stateView(now, lane)).toMatchObject({
      section_anchor: null,
      digest: "no section about layer_b/doc_update in STATE/vpm-mini/current_state.md",
      known_gaps: [],
    });
  });

  it("a document missing at the cutoff, or before any commit", async () => {
    expect(await collectStateDoc(repo.dir, "STATE/none.md", new Date("2026-02-01T00:00:00Z"))).toEqual({
      path: "STATE/none.md",
      exists: false,
      revision: null,
      updated_at: null,
      sections: [],
    });
    const early = await collectStateDoc(repo.dir, "STATE/vpm-mini/current_state.md", new Date("2025-12-01T00:00:00Z"));
    expect(stateView(early, lane).digest).toBe(
      "STATE/vpm-mini/current_state.md does not exist (no commit touched it up to the cutoff)",
    );
  });

  it("a repository without commits has no document yet", async () => {
    const empty = new TestRepo();
    try {
      expect(await collectStateDoc(empty.dir, "STATE/current_state.md", new Date())).toEqual({
        path: "STATE/current_state.md",
        exists: false,
        revision: null,
        updated_at: null,
        sections: [],
      });
    } finally {
      empty.cleanup();
    }
  });

  it("a document deleted before the cutoff does not exist then, and the digest names the commit", async () => {
    const r = new TestRepo();
    try {
      r.commit("2026-01-01T00:00:00Z", "add", { "STATE/current_state.md": "# State\n" });
      const del = r.commit("2026-01-02T00:00:00Z", "remove", { "STATE/current_state.md": null });
      const doc = await collectStateDoc(r.dir, "STATE/current_state.md", new Date("2026-01-03T00:00:00Z"));
      expect(doc).toEqual({
        path: "STATE/current_state.md",
        exists: false,
        revision: del,
        updated_at: "2026-01-02T00:00:00.000Z",
        sections: [],
      });
      expect(stateView(doc, lane).digest).toBe(`STATE/current_state.md does not exist at ${del.slice(0, 12)}`);
    } finally {
      r.cleanup();
    }
  });

  it("refuses a state_file outside the repository", async () => {
    await expect(collectStateDoc(repo.dir, "../../etc/passwd", new Date())).rejects.toThrow(
      `state_file "../../etc/passwd" is outside ${repo.dir}`,
    );
  });

  it("names the document a lane reads: the configured one, else the project's own at the cutoff, else the default", async () => {
    const keepsDefault = { state_file: "STATE/current_state.md" };
    expect(await stateDocPath(repo.dir, "vpm-mini", keepsDefault, new Date("2026-02-01T00:00:00Z"))).toEqual({
      path: "STATE/vpm-mini/current_state.md",
      found_by: "the project's own STATE document (STATE/vpm-mini/current_state.md)",
    });
    // Before the project's own document was committed (before any commit: said too), and for a
    // project without one: the default.
    for (const [project, at, none] of [
      ["vpm-mini", "2025-12-01T00:00:00Z", { no_commits: true }],
      ["other", "2026-02-01T00:00:00Z", {}],
    ] as const)
      expect(await stateDocPath(repo.dir, project, keepsDefault, new Date(at))).toStrictEqual({
        path: "STATE/current_state.md",
        found_by: `the default state_file (STATE/${project}/current_state.md does not exist at the cutoff)`,
        ...none,
      });
    expect(await stateDocPath(repo.dir, "vpm-mini", { state_file: "docs/state.md" }, new Date())).toEqual({
      path: "docs/state.md",
      found_by: "the lane's configured state_file",
    });
    await expect(stateDocPath(repo.dir, "vpm-mini", { state_file: "../outside.md" }, new Date())).rejects.toThrow(
      `state_file "../outside.md" is outside ${repo.dir}`,
    );
    await expect(stateDocPath(repo.dir, "../../up", keepsDefault, new Date())).rejects.toThrow(
      `state_file "STATE/../../up/current_state.md" is outside ${repo.dir}`,
    );
  });

  it("reads the document's history beside its text, and fails with the text when the text fails", async () => {
    const path = "STATE/vpm-mini/current_state.md";
    const cutoff = new Date("2026-02-01T00:00:00Z");
    const read = collectStateDoc(repo.dir, path, cutoff);
    // The text arrives after the history's git log has started: the cycles are the same as with it in hand.
    expect(await repoCycles(repo.dir, lane, { path, read }, cutoff, [])).toEqual(
      await repoCycles(repo.dir, lane, { path, read: await read }, cutoff, []),
    );
    // A text that fails while the log runs is this call's failure (an unhandled one would fail the test run).
    const failing = Promise.reject(new Error("the text could not be read"));
    await expect(repoCycles(repo.dir, lane, { path, read: failing }, cutoff, [])).rejects.toThrow(
      "the text could not be read",
    );
  });
});

describe("the lane's section, as the project writes its headings", () => {
  const doc = (markdown: string) => ({
    path: "STATE/vpm-mini/current_state.md",
    exists: true,
    revision: "abc",
    updated_at: "2026-01-01T00:00:00Z",
    sections: parseSections(markdown),
  });

  it("finds a Japanese heading for the layer and the lane (レイヤーB, ドキュメント更新) and its 残課題 list", () => {
    const view = stateView(
      doc(
        "# 現在の状態\n\n## プレイヤー基盤\n\n- 関係なし\n\n## レイヤーＢ ドキュメント更新レーン\n\n- cycle-1 を適用済み\n\n### 残課題\n\n- PM Snapshot 未反映\n- [x] Sho のレビュー\n",
      ),
      lane,
    );
    expect(view).toMatchObject({
      section_anchor: "#レイヤーｂ-ドキュメント更新レーン",
      digest: "cycle-1 を適用済み",
      known_gaps: ["PM Snapshot 未反映"],
    });
  });

  it("prefers the lane named under its layer's section over the layer alone", () => {
    const sections = parseSections(
      "# State\n\n## B層\n\n概要のみ\n\n### 文書更新\n\n- Aya→Sho→Tsugu が稼働\n\n## Layer A\n\n- nothing\n",
    );
    expect(laneSectionIndex(sections, lane)).toBe(2);
    expect(
      stateView(doc("# State\n\n## B層\n\n概要のみ\n\n### 文書更新\n\n- Aya→Sho→Tsugu が稼働\n"), lane).digest,
    ).toBe("Aya→Sho→Tsugu が稼働");
  });

  it("reads English spellings (Layer B / Doc Update) and does not take a longer word for the layer", () => {
    expect(laneSectionIndex(parseSections("# S\n\n## Player Base\n\n## Doc-Update lane (Layer B)\n"), lane)).toBe(2);
    expect(laneSectionIndex(parseSections("# S\n\n## Player base\n\n## Layer BC\n"), lane)).toBeNull();
    expect(stateView(doc("# S\n\n## Layer C\n\n- other\n"), lane).digest).toBe(
      "no section about layer_b/doc_update in STATE/vpm-mini/current_state.md",
    );
  });

  it("finds a custom lane by its own words (weekly_report as 週次レポート)", () => {
    const sections = parseSections("# 状態\n\n## レイヤーB\n\n## 週次レポート\n\n- 毎週月曜に生成\n");
    expect(laneSectionIndex(sections, { layer: "ops", name: "weekly_report" })).toBe(2);
  });
});
