import type { z } from "zod";
import { isPmagentError, plural } from "../../core/index.js";
import type { ModelClient, OutputSchema, textFormat } from "../../prompt/index.js";
import type { Evidence, Highlight, KaiResponse } from "./schema.js";

/**
 * `--model-digest`: the configured model writes what_changed's highlights from the same grouped
 * evidence Kai's own come from (its themes, each with its evidence ids), as strict JSON. Every
 * highlight must cite the evidence it rests on; an answer citing an id Kai did not give, telling
 * one theme twice or inventing one is refused, and Kai's own highlights stay (they are the fallback
 * and the oracle the tests hold the model to).
 */

const MAX_TITLE = 140;
const MAX_SUMMARY = 700;

/** The answer's schema, built from zod when a digest is asked for: `kai status` loads neither zod nor prompt code. */
function digestSchema(zod: typeof z) {
  return zod
    .object({
      highlights: zod.array(
        zod
          .object({
            /** The theme's number as given (Kai's rank for it). */
            theme: zod.number().int(),
            title: zod.string().min(1).max(MAX_TITLE),
            /** 2–3 sentences: what changed and why. */
            summary: zod.string().min(1).max(MAX_SUMMARY),
            /** Ids of the theme's evidence the summary rests on (at least one). */
            evidence_ids: zod.array(zod.string()).min(1),
          })
          .strict(),
      ),
    })
    .strict();
}
export type ModelDigest = z.output<ReturnType<typeof digestSchema>>;

/** The answer's schema as zod checks it, as the model client holds the answer to it, and as the request names it. */
interface AnswerSchema {
  zod: ReturnType<typeof digestSchema>;
  output: OutputSchema;
  format: ReturnType<typeof textFormat>;
}

let schemas: Promise<AnswerSchema> | undefined;
function answerSchema(): Promise<AnswerSchema> {
  schemas ??= Promise.all([import("zod"), import("../../prompt/index.js")]).then(([{ z }, prompt]) => {
    const zod = digestSchema(z);
    const output = prompt.outputSchemaFromZod("kai_highlights_v1", zod);
    return { zod, output, format: prompt.textFormat(output) };
  });
  return schemas;
}

const INSTRUCTIONS = [
  "You write the highlights of a weekly project digest for a project manager, from themes a tool grouped from the week's evidence.",
  "Each theme has a number, a category, a draft title and summary, and its evidence, each with an id.",
  "Answer with JSON: highlights, most important first, at most one per theme and at most as many as there are themes.",
  "For each: theme (its number), a short title, a summary of 2 to 3 sentences saying what changed and why, and evidence_ids: the ids of that theme's evidence your summary rests on.",
  "Use only facts the theme gives; cite only ids listed under that theme; keep numbers, ids, paths and names exactly as written.",
].join("\n");

/** The id a model cites for a piece of evidence: its type and id (`pr:849`, `file:STATE/x.md`). */
export const evidenceKey = (e: Evidence): string => `${e.type}:${e.id}`;

/** What the model is shown: each theme with its evidence ids. */
export function digestInput(highlights: Highlight[]): string {
  return JSON.stringify({
    themes: highlights.map((h) => ({
      theme: h.rank,
      category: h.category,
      title: h.title,
      summary: h.summary,
      evidence: h.evidence.map((e) => ({
        id: evidenceKey(e),
        ...(e.title !== undefined ? { title: e.title } : {}),
        ...(e.path !== undefined ? { path: e.path } : {}),
        ...(e.at !== undefined ? { at: e.at } : {}),
      })),
    })),
  });
}

/** The model's highlights checked against the themes: every theme known, told once, every cited id the theme's own. */
export function checkDigest(
  digest: ModelDigest,
  themes: Highlight[],
): { ok: true; highlights: Highlight[] } | { ok: false; problem: string } {
  if (digest.highlights.length === 0) return { ok: false, problem: "it has no highlight" };
  const byRank = new Map(themes.map((h) => [h.rank, h]));
  const told = new Set<number>();
  const out: Highlight[] = [];
  for (const [i, h] of digest.highlights.entries()) {
    const theme = byRank.get(h.theme);
    if (!theme)
      return {
        ok: false,
        problem: `highlight ${i + 1} names theme ${h.theme}, which was not given (themes ${themes.map((t) => t.rank).join(", ")})`,
      };
    if (told.has(h.theme)) return { ok: false, problem: `theme ${h.theme} is told twice` };
    told.add(h.theme);
    const evidence = new Map(theme.evidence.map((e) => [evidenceKey(e), e]));
    const unknown = h.evidence_ids.filter((id) => !evidence.has(id));
    if (unknown.length > 0)
      return {
        ok: false,
        problem: `highlight ${i + 1} cites ${unknown.map((id) => `"${id}"`).join(", ")}, not evidence of theme ${h.theme}`,
      };
    out.push({
      rank: i + 1,
      category: theme.category,
      title: h.title.trim(),
      summary: h.summary.trim(),
      evidence: [...new Set(h.evidence_ids)].map((id) => evidence.get(id)!),
    });
  }
  return { ok: true, highlights: out };
}

/** The digest's "Top:" line for new highlights (the rest of summary_md is the payload's counts and risks, unchanged). */
function withTop(summary: string, highlights: Highlight[]): string {
  return summary
    .split("\n")
    .map((line) =>
      line.startsWith("- Top: ")
        ? `- Top: ${highlights
            .slice(0, 2)
            .map((h) => h.title)
            .join("; ")}`
        : line,
    )
    .join("\n");
}

/** Let the model write what_changed's highlights; on any failure the response is returned as it was, with a note saying why. */
export async function modelDigest(client: ModelClient, response: KaiResponse): Promise<KaiResponse> {
  if (response.status !== "ok" || response.payload.kind !== "what_changed_v1") return response;
  const data = response.payload.data;
  const themes = data.highlights;
  if (themes.length === 0)
    return {
      ...response,
      notes: [...response.notes, "highlights not written by the model: the window has no theme to write about"],
    };
  const refuse = (why: string) => ({
    ...response,
    notes: [...response.notes, `highlights not written by the model: ${why}; Kai's own are kept`],
  });
  let answer: unknown;
  const schema = await answerSchema();
  try {
    const res = await client.respond(
      {
        model: client.model,
        instructions: INSTRUCTIONS,
        input: [{ type: "message", role: "user", content: digestInput(themes) }],
        text: { format: schema.format },
      },
      { output: schema.output },
    );
    answer = res.answer;
  } catch (err) {
    if (!isPmagentError(err)) throw err;
    return refuse(err.message);
  }
  const digest = schema.zod.parse(answer);
  if (digest.highlights.length > themes.length)
    return refuse(`it has ${digest.highlights.length} highlights for ${plural(themes.length, "theme")}`);
  const check = checkDigest(digest, themes);
  if (!check.ok) return refuse(`the answer was refused because ${check.problem}`);
  return {
    ...response,
    payload: { kind: "what_changed_v1", data: { ...data, highlights: check.highlights } },
    summary_md: withTop(response.summary_md, check.highlights),
    notes: [
      ...response.notes,
      `highlights written by model ${client.model} from Kai's ${plural(themes.length, "theme")}, each citing its evidence`,
    ],
  };
}
