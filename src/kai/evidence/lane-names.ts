import type { LaneConfig } from "../../config/light/index.js";

/**
 * How a project may write a lane's layer and name in its own documents: "layer_b" as "Layer B",
 * "レイヤーB" or "B層"; "doc_update" as "Doc Update", "ドキュメント更新" or "文書更新". Each word of
 * the configured name is read through this alias table (words it does not know stand for
 * themselves), and text is compared after NFKC normalization (full-width letters, `（）`) and
 * lower-casing, with separators (space, `_`, `-`, `・`, `/`) optional between words.
 */
const WORD_ALIASES: Record<string, readonly string[]> = {
  layer: ["layer", "レイヤー", "レイヤ"],
  lane: ["lane", "レーン"],
  doc: ["doc", "docs", "document", "documents", "ドキュメント", "文書"],
  docs: ["docs", "doc", "document", "documents", "ドキュメント", "文書"],
  document: ["document", "doc", "ドキュメント", "文書"],
  update: ["update", "updates", "更新", "アップデート"],
  review: ["review", "レビュー"],
  apply: ["apply", "適用"],
  proposal: ["proposal", "提案"],
  snapshot: ["snapshot", "スナップショット"],
  report: ["report", "reports", "レポート", "報告"],
  reports: ["reports", "report", "レポート", "報告"],
  weekly: ["weekly", "週次"],
  status: ["status", "ステータス", "状況"],
  release: ["release", "リリース"],
  test: ["test", "tests", "テスト"],
};

const normalize = (text: string) => text.normalize("NFKC").toLowerCase();
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const SEP = "[\\s_\\-・/:：]*";
const ASCII_WORD = /[a-z0-9]/;

function words(name: string): string[] {
  return normalize(name)
    .split(/[\s_-]+/)
    .filter((w) => w !== "");
}

/** A pattern matching the phrase in any of its spellings; an ASCII edge must not continue a longer word ("layer b" is not in "player base"). */
function phrase(name: string): RegExp {
  const ws = words(name);
  const alternatives = ws.map((w) => `(?:${(WORD_ALIASES[w] ?? [w]).map((a) => escape(normalize(a))).join("|")})`);
  const first = ws[0] ?? "";
  const last = ws.at(-1) ?? "";
  // Japanese writes a layer's letter first as well: "B層", "Bレイヤー".
  const layerLetter = ws.length === 2 && ws[0] === "layer" ? `|(?:${escape(ws[1]!)}${SEP}(?:層|レイヤー|レイヤ))` : "";
  const start = ASCII_WORD.test(first[0] ?? "") ? "(?<![a-z0-9])" : "";
  const end = ASCII_WORD.test(last.at(-1) ?? "") || layerLetter ? "(?![a-z0-9])" : "";
  return new RegExp(`${start}(?:${alternatives.join(SEP)}${layerLetter})${end}`, "u");
}

export interface LaneNameMatcher {
  layer: (text: string) => boolean;
  name: (text: string) => boolean;
}

/** Tests whether a heading (or any text) names the lane's layer, its name, in any spelling the alias table knows. */
export function laneNameMatcher(lane: Pick<LaneConfig, "layer" | "name">): LaneNameMatcher {
  const layer = phrase(lane.layer);
  const name = phrase(lane.name);
  return { layer: (text) => layer.test(normalize(text)), name: (text) => name.test(normalize(text)) };
}
