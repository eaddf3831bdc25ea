/**
 * Readers of the origin's lane files written from the origin's documents alone (the roles
 * contract, doc_update_review_v1_spec.md, doc_update_apply_v1_spec_v1.md, pm_snapshot_v1_spec.md,
 * and the proposal format the origin's proposal workflow asks for), independent of pmagent's zod
 * schemas: each returns what it read, or the list of what does not follow the spec. Unknown fields
 * are allowed, as the origin's own readers allow them.
 */

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === "string";
/** ISO 8601 with a time zone (the specs: "タイムゾーン付き推奨"; the origin's files carry one). */
const isZoned = (v: unknown) =>
  isStr(v) && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(v) && !Number.isNaN(Date.parse(v));
const oneOf = (v: unknown, values: string[]) => isStr(v) && values.includes(v);

function need(problems: string[], ok: boolean, what: string): void {
  if (!ok) problems.push(what);
}

/** doc_update_proposal_v1: schema_version, project_id, generated_at, updates[] (target.path, reason, change_type, suggestion_markdown), no_change[], notes[]. */
export function readOriginProposal(value: unknown): { problems: string[]; targets: string[] } {
  const p: string[] = [];
  if (!isObj(value)) return { problems: ["not an object"], targets: [] };
  need(p, value.schema_version === "doc_update_proposal_v1", "schema_version is not doc_update_proposal_v1");
  need(p, isStr(value.project_id) && value.project_id !== "", "project_id missing");
  need(p, isZoned(value.generated_at), "generated_at is not ISO 8601 with a time zone");
  need(p, Array.isArray(value.updates), "updates is not an array");
  const targets: string[] = [];
  for (const [i, u] of (Array.isArray(value.updates) ? value.updates : []).entries()) {
    if (!isObj(u) || !isObj(u.target) || !isStr(u.target.path)) {
      p.push(`updates[${i}].target.path missing`);
      continue;
    }
    targets.push(u.target.path);
    need(p, isStr(u.reason), `updates[${i}].reason missing`);
    need(
      p,
      oneOf(u.change_type, ["add", "edit_paragraph", "append_list_item", "other"]),
      `updates[${i}].change_type ${JSON.stringify(u.change_type)} is not add|edit_paragraph|append_list_item|other`,
    );
    need(
      p,
      isStr(u.suggestion_markdown) && u.suggestion_markdown.trim() !== "",
      `updates[${i}].suggestion_markdown missing`,
    );
    if (u.target.section_hint !== undefined)
      need(p, isStr(u.target.section_hint), `updates[${i}].target.section_hint is not a string`);
    if (u.confidence !== undefined)
      need(p, oneOf(u.confidence, ["high", "medium", "low"]), `updates[${i}].confidence is not high|medium|low`);
  }
  if (value.no_change !== undefined)
    need(
      p,
      Array.isArray(value.no_change) && value.no_change.every((n) => isObj(n) && isStr(n.path)),
      "no_change entries need a path",
    );
  if (value.notes !== undefined)
    need(p, Array.isArray(value.notes) && value.notes.every(isStr), "notes is not a list of strings");
  return { problems: p, targets };
}

/** doc_update_review_v1 (review spec §3): meta, overall_assessment, update_judgements[], target_files[], notes[]. */
export function readOriginReview(value: unknown): { problems: string[]; files: Map<string, string> } {
  const p: string[] = [];
  const files = new Map<string, string>();
  if (!isObj(value)) return { problems: ["not an object"], files };
  need(p, value.schema_version === "doc_update_review_v1", "schema_version is not doc_update_review_v1");
  need(p, isStr(value.project_id) && value.project_id !== "", "project_id missing");
  need(p, isStr(value.proposal_ref) && value.proposal_ref !== "", "proposal_ref missing");
  need(p, isZoned(value.generated_at), "generated_at is not ISO 8601 with a time zone");
  const overall = value.overall_assessment;
  need(p, isObj(overall) && isStr(overall.summary), "overall_assessment.summary missing");
  need(
    p,
    isObj(overall) && oneOf(overall.risk_level, ["low", "medium", "high"]),
    "overall_assessment.risk_level is not low|medium|high",
  );
  need(p, Array.isArray(value.update_judgements), "update_judgements is not an array");
  for (const [i, j] of (Array.isArray(value.update_judgements) ? value.update_judgements : []).entries()) {
    need(p, isObj(j) && isStr(j.target_path), `update_judgements[${i}].target_path missing`);
    need(
      p,
      isObj(j) && oneOf(j.decision, ["accept", "reject"]),
      `update_judgements[${i}].decision is not accept|reject`,
    );
    need(p, isObj(j) && isStr(j.reason), `update_judgements[${i}].reason missing`);
    need(
      p,
      isObj(j) &&
        (j.suggestion_override === undefined || j.suggestion_override === null || isStr(j.suggestion_override)),
      `update_judgements[${i}].suggestion_override is not a string or null`,
    );
  }
  for (const [i, f] of (Array.isArray(value.target_files) ? value.target_files : []).entries()) {
    const path = isObj(f) && isObj(f.target) && isStr(f.target.path) ? f.target.path : undefined;
    need(p, path !== undefined, `target_files[${i}].target.path missing`);
    need(
      p,
      isObj(f) && f.change_type === "replace_whole_file",
      `target_files[${i}].change_type is not replace_whole_file`,
    );
    need(p, isObj(f) && isStr(f.final_content), `target_files[${i}].final_content missing`);
    need(p, isObj(f) && isStr(f.risk), `target_files[${i}].risk missing`);
    // §3.4: one entry per file.
    need(p, path === undefined || !files.has(path), `target_files has ${path} twice`);
    if (path !== undefined && isObj(f) && isStr(f.final_content)) files.set(path, f.final_content);
  }
  if (value.notes !== undefined)
    need(p, Array.isArray(value.notes) && value.notes.every(isStr), "notes is not a list of strings");
  return { problems: p, files };
}

/**
 * What the origin's Tsugu v1 would apply (apply spec §2, §4, §5): nothing unless review_mode is
 * auto_accept_v1, every target file's risk is low, each path is under STATE/ or docs/ and has one
 * final_content; then each file's whole new text.
 */
export function originTsuguWouldApply(value: unknown): { refused: string | null; files: Map<string, string> } {
  const { problems, files } = readOriginReview(value);
  if (problems.length > 0) return { refused: problems.join("; "), files: new Map() };
  const review = value as Json;
  if (review.review_mode !== "auto_accept_v1")
    return { refused: "review_mode is not auto_accept_v1", files: new Map() };
  const list = (review.target_files as Json[] | undefined) ?? [];
  if (list.length === 0) return { refused: "no target_files", files: new Map() };
  for (const f of list) {
    const path = (f.target as Json).path as string;
    if (f.risk !== "low") return { refused: `${path}: risk is not low`, files: new Map() };
    if (!path.startsWith("STATE/") && !path.startsWith("docs/"))
      return { refused: `${path} is not under STATE/ or docs/`, files: new Map() };
    if ((f.final_content as string).trim() === "") return { refused: `${path}: empty final_content`, files: new Map() };
  }
  return { refused: null, files };
}

/** A pm_snapshot file (spec §5): the pm_snapshot_v1 JSON, one `---` line, the Markdown view (§3). */
export function readOriginSnapshotFile(text: string): { problems: string[]; snapshot: Json | null; view: string } {
  const lines = text.split("\n");
  const rule = lines.indexOf("---");
  if (rule < 0) return { problems: ["no --- line between the JSON and the Markdown view"], snapshot: null, view: "" };
  let snapshot: unknown;
  try {
    snapshot = JSON.parse(lines.slice(0, rule).join("\n"));
  } catch (err) {
    return { problems: [`the part before --- is not JSON: ${(err as Error).message}`], snapshot: null, view: "" };
  }
  const view = lines.slice(rule + 1).join("\n");
  const p: string[] = [];
  if (!isObj(snapshot)) return { problems: ["the JSON is not an object"], snapshot: null, view };
  const s = snapshot;
  need(p, s.schema_version === "pm_snapshot_v1", "schema_version is not pm_snapshot_v1");
  need(p, isStr(s.project_id) && s.project_id !== "", "project_id missing");
  need(p, isZoned(s.generated_at), "generated_at is not ISO 8601 with a time zone");
  need(
    p,
    isObj(s.current) && isStr(s.current.summary) && Array.isArray(s.current.bullets) && s.current.bullets.every(isStr),
    "current needs summary and bullets",
  );
  need(
    p,
    isObj(s.goals) && Array.isArray(s.goals.short_term) && Array.isArray(s.goals.mid_term),
    "goals needs short_term and mid_term",
  );
  need(p, Array.isArray(s.gaps) && s.gaps.every(isStr), "gaps is not a list of strings");
  need(p, Array.isArray(s.next_actions), "next_actions is not an array");
  for (const [i, a] of (Array.isArray(s.next_actions) ? s.next_actions : []).entries()) {
    const ok =
      isObj(a) &&
      isStr(a.id) &&
      isStr(a.title) &&
      isStr(a.details) &&
      Array.isArray(a.evidence_refs) &&
      Array.isArray(a.links);
    need(p, ok, `next_actions[${i}] needs id, title, details, evidence_refs and links`);
    need(
      p,
      isObj(a) && oneOf(a.impact, ["high", "medium", "low"]) && oneOf(a.effort, ["high", "medium", "low"]),
      `next_actions[${i}] impact/effort is not high|medium|low`,
    );
    need(
      p,
      isObj(a) && oneOf(a.status, ["todo", "in_progress", "done"]),
      `next_actions[${i}].status is not todo|in_progress|done`,
    );
  }
  need(
    p,
    Array.isArray(s.evidence) &&
      s.evidence.every((e) => isObj(e) && isStr(e.kind) && isStr(e.path) && isStr(e.summary)),
    "evidence entries need kind, path and summary",
  );
  need(p, Array.isArray(s.notes) && s.notes.every(isStr), "notes is not a list of strings");
  // The Markdown view's title and its six sections, in order.
  need(
    p,
    new RegExp(`^# PM Snapshot: ${String(s.project_id)} \\(\\d{4}-\\d\\d-\\d\\d\\)$`, "m").test(view),
    "the view has no '# PM Snapshot: <project_id> (<date>)' title",
  );
  const headings = view
    .split("\n")
    .filter((l) => l.startsWith("## "))
    .map((l) =>
      l
        .slice(3)
        .split(/[（(]/)[0]!
        .replace(/^\d\.\s*/, "")
        .trim(),
    );
  need(
    p,
    JSON.stringify(headings) === JSON.stringify(["Current", "Goals", "Gap", "Next 3", "Evidence", "Notes"]),
    `the view's sections are ${JSON.stringify(headings)}, not Current, Goals, Gap, Next 3, Evidence, Notes`,
  );
  return { problems: p, snapshot: s, view };
}
