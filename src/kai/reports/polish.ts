import { isPmagentError } from "../../core/index.js";
import type { ModelClient } from "../../prompt/index.js";
import type { KaiResponse } from "./schema.js";

const INSTRUCTIONS = [
  "You polish a short Markdown status digest for people. Rewrite its wording only, so it reads naturally.",
  "Keep its form: one heading line starting with '## ', then 2 to 4 lines starting with '- '.",
  "Keep every number, date, id, path, role and name exactly as written; add no fact and drop none.",
  "Answer with the digest only.",
].join("\n");

/** Tokens a rewrite must keep verbatim: anything holding a digit (dates, ids, counts, PR numbers). */
function facts(text: string): string[] {
  return [...new Set(text.match(/[\p{L}\p{N}_.:/#-]*\d[\p{L}\p{N}_.:/#-]*/gu) ?? [])].map((t) =>
    t.replace(/[.:]+$/, ""),
  );
}

/** Why a rewrite is not acceptable, or null when it keeps the form and every fact. */
export function rewriteProblem(original: string, rewrite: string): string | null {
  const lines = rewrite.trim().split("\n");
  if (lines.length < 3 || lines.length > 5) return `it has ${lines.length} lines (3–5 expected)`;
  if (!lines[0]!.startsWith("## ")) return "its first line is not a '## ' heading";
  const notBullet = lines.slice(1).find((l) => !l.startsWith("- "));
  if (notBullet !== undefined) return `line "${notBullet}" is not a '- ' bullet`;
  const lost = facts(original).filter((f) => !rewrite.includes(f));
  return lost.length > 0 ? `it dropped or changed ${lost.map((f) => `"${f}"`).join(", ")}` : null;
}

/**
 * `--polish`: let the configured model reword `summary_md`. The payload never changes; a rewrite
 * that breaks the form or loses a fact is refused and the deterministic digest stays.
 */
export async function polishSummary(client: ModelClient, response: KaiResponse): Promise<KaiResponse> {
  if (response.status !== "ok") return response;
  let text: string;
  try {
    const answer = await client.respond({
      model: client.model,
      instructions: INSTRUCTIONS,
      input: [{ type: "message", role: "user", content: response.summary_md }],
    });
    text = answer.text.trim();
  } catch (err) {
    if (!isPmagentError(err)) throw err;
    return { ...response, notes: [...response.notes, `summary_md not polished: ${err.message}`] };
  }
  const problem = rewriteProblem(response.summary_md, text);
  if (problem !== null)
    return {
      ...response,
      notes: [...response.notes, `summary_md not polished: the model's rewrite was refused because ${problem}`],
    };
  return {
    ...response,
    summary_md: text,
    notes: [...response.notes, `summary_md worded by model ${client.model} (payload unchanged)`],
  };
}
