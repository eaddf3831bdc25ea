import { plural } from "../../core/index.js";
import { pathCategory } from "../evidence/index.js";
import type { Evidence } from "./schema.js";
import { firstSentence, ref, titleScope, unitEvidence, type ChangeUnit } from "./units.js";

/**
 * Themes: the window's merged changes grouped into the stories a person would name (a capability
 * built across several PRs, a workflow introduced then fixed, a workflow rebuilt, a run of small
 * fixes) by the names they share — title scopes, the directories they are mostly in, workflow
 * files; a word two titles happen to share is not enough — and scored by what they did: files
 * added, lines changed, PRs, and whether they touched more than tests.
 */

export type ThemeKind = "capability" | "workflow_introduced" | "workflow_reworked" | "maintenance";

export interface Theme {
  kind: ThemeKind;
  /** What the theme is called: the name most of its units share (a scope, directory or `file:` workflow path). */
  name: string;
  /** Oldest first. */
  units: ChangeUnit[];
  significance: number;
}

/** Words that say what kind of change a title is, not what it is about: they link nothing. */
const STOP = new Set(
  (
    "add adds added adding fix fixes fixed fixing update updates updated bump bumps use uses make makes move moves remove removes rename renames refactor " +
    "support supports handle handles allow allows improve improves clean cleanup tweak tweaks tune tunes polish simplify extract split merge revert " +
    "the and for with from into onto when then than not new more less also only after before via per all any its this that their them our your " +
    "doc docs readme changelog test tests testing spec typo typos guide comment comments wording note notes ci build lint format style chore " +
    "workflow job jobs step steps file files code small minor misc wip main master index utils util helpers helper config package lock json yaml yml " +
    "feat feature issue issues pr prs part first second again end-to-end way case cases error errors message messages check checks run runs"
  ).split(" "),
);

/** Directory names every project has: they say where, not what. */
const GENERIC_DIRS = new Set([
  "src",
  "lib",
  "app",
  "apps",
  "packages",
  "pkg",
  "cmd",
  "internal",
  "test",
  "tests",
  "__tests__",
  "docs",
  "doc",
  "scripts",
  "script",
  ".github",
  "workflows",
  "reports",
  "specs",
  "spec",
  "e2e",
  "fixtures",
  "fixture",
  "testdata",
]);

/** Test code and fixtures: work on them alone is never the week's headline. */
const TEST_PATH =
  /(^|\/)(tests?|__tests__|e2e|fixtures?|testdata|__snapshots__)(\/|$)|[._-](test|spec)\.[cm]?[jt]sx?$/i;
export const isTestPath = (path: string): boolean => TEST_PATH.test(path);
const isWorkflow = (path: string) => pathCategory(path) === "workflow";
/** A new file that is new work: code or documentation, not a report, the STATE document, a workflow or a test. */
const isNewWork = (path: string) =>
  (pathCategory(path) === "code" || pathCategory(path) === "docs") && !isTestPath(path);

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .map((w) =>
      w.length > 4 && w.endsWith("ies")
        ? `${w.slice(0, -3)}y`
        : w.length > 4 && w.endsWith("s") && !w.endsWith("ss")
          ? w.slice(0, -1)
          : w,
    )
    .filter((w) => w.length >= 3 && !/^\d+$/.test(w) && !STOP.has(w));
}

/** The name shared by changes to tests alone (no word or directory gives it). */
const TESTS_ONLY = "(tests)";

interface Keys {
  /** The names a unit is about: its title's scope and words, its directories' names, its workflow files. */
  all: Set<string>;
  /** Those that name a thing (a scope, a directory, a workflow), not just a word of the title. */
  names: Set<string>;
  testOnly: boolean;
}

function keysOf(u: ChangeUnit, bookkeeping: Set<string>): Keys {
  const all = new Set<string>();
  const names = new Set<string>();
  const scope = titleScope(u.title);
  if (scope !== null) for (const k of [scope, ...words(scope)]) names.add(k);
  const title = u.title.replace(/^[A-Za-z][\w.-]*(?:\([^)]*\))?!?:\s*/, "").replace(/^revert\s+/i, "");
  for (const w of words(title)) all.add(w);
  // The directories a change is mostly in, or the one its title names: a capability's PR that also
  // touches shared code is not thereby part of every small fix to that code.
  const dirs = new Map<string, number>();
  for (const f of u.commit.files) {
    if (bookkeeping.has(f.path)) continue;
    if (isWorkflow(f.path)) names.add(`file:${f.path}`);
    const parts = f.path.split("/");
    const here = new Set(
      parts
        .slice(0, -1)
        .filter((d) => !GENERIC_DIRS.has(d.toLowerCase()) && !d.startsWith("."))
        .flatMap(words),
    );
    for (const w of here) dirs.set(w, (dirs.get(w) ?? 0) + 1);
  }
  const titled = [...dirs.keys()].filter((d) => all.has(d) || names.has(d));
  const most = Math.max(0, ...dirs.values());
  for (const d of titled.length > 0 ? titled : [...dirs].filter(([, n]) => n === most).map(([d]) => d)) names.add(d);
  for (const k of names) all.add(k);
  const paths = u.commit.files.map((f) => f.path);
  const testOnly = paths.length > 0 && paths.every(isTestPath);
  // Changes to tests alone are one story together (told low), whatever they are named after.
  if (testOnly) {
    names.add(TESTS_ONLY);
    all.add(TESTS_ONLY);
  }
  return { all, names, testOnly };
}

const lines = (us: ChangeUnit[]) => us.reduce((n, u) => n + (u.commit.lines_changed ?? 0), 0);
const addedFiles = (us: ChangeUnit[], test: (p: string) => boolean) => [
  ...new Set(us.flatMap((u) => u.commit.files.filter((f) => f.change === "added" && test(f.path)).map((f) => f.path))),
];
const touched = (us: ChangeUnit[]) => [...new Set(us.flatMap((u) => u.commit.files.map((f) => f.path)))];

/** What a group of units did, and how much that matters (higher first; at most 98, below a completed cycle). */
export function scoreTheme(us: ChangeUnit[]): { kind: ThemeKind; significance: number } {
  const paths = touched(us);
  const testOnly = paths.length > 0 && paths.every(isTestPath);
  const workflows = paths.filter(isWorkflow);
  const newCode = addedFiles(us, isNewWork);
  const size = lines(us);
  const n = us.length;
  // Lines per change tell a rebuild from a run of one-line bumps; an unknown size counts as substantial.
  const substantial = us.some((u) => u.commit.lines_changed === undefined) || size / n >= 8;
  const sizeScore = Math.min(16, 4 * Math.log10(1 + size));
  let kind: ThemeKind;
  let score: number;
  if (workflows.length * 2 >= paths.length && addedFiles(us, isWorkflow).length > 0) {
    kind = "workflow_introduced";
    score = 44 + 4 * Math.min(n, 8) + sizeScore / 2;
  } else if (newCode.length > 0) {
    kind = "capability";
    score = 40 + 6 * Math.min(n, 8) + sizeScore + Math.min(8, newCode.length);
  } else if (workflows.length * 2 >= paths.length && substantial) {
    kind = "workflow_reworked";
    score = 30 + 3 * Math.min(n, 12) + sizeScore;
  } else {
    kind = "maintenance";
    score = 15 + Math.min(n, 6) + sizeScore / 2;
  }
  return { kind, significance: Math.min(98, testOnly ? score * 0.4 : score) };
}

/**
 * Group the units into themes: repeatedly take the name shared by at least two units whose group
 * (with the units sharing the group's common names) matters most, until no name is shared. A unit
 * is in at most one theme. Units left alone come back in `rest`, except those that stand on their
 * own (one PR adding a workflow or new code), which are themes of one.
 */
export function findThemes(units: ChangeUnit[]): { themes: Theme[]; rest: ChangeUnit[] } {
  const open = [...units].sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || (a.pr ?? 0) - (b.pr ?? 0));
  // A file most changes touch (a changelog, a lock file) links everything, so it links nothing.
  const fileCount = new Map<string, number>();
  for (const u of open)
    for (const p of new Set(u.commit.files.map((f) => f.path))) fileCount.set(p, (fileCount.get(p) ?? 0) + 1);
  const bookkeeping = new Set(
    [...fileCount].filter(([, n]) => open.length >= 6 && n * 2 > open.length).map(([p]) => p),
  );
  const keys = new Map(open.map((u) => [u, keysOf(u, bookkeeping)]));
  const themes: Theme[] = [];
  for (;;) {
    const byKey = new Map<string, ChangeUnit[]>();
    for (const u of open) for (const k of keys.get(u)!.all) byKey.set(k, [...(byKey.get(k) ?? []), u]);
    let best: Theme | null = null;
    for (const [key, group] of [...byKey].sort(([a], [b]) => a.localeCompare(b))) {
      if (group.length < 2) continue;
      // A word two titles share ("empty", "retry") is no story; a name most of them are about is.
      if (group.filter((u) => keys.get(u)!.names.has(key)).length * 2 < group.length) continue;
      const members = expand(key, group, open, keys);
      const { kind, significance } = scoreTheme(members);
      // Small changes that only share a word of their titles ("clarify", "broken") are no story.
      // (Work on tests alone is one story, told low, whatever it shares.)
      if (kind === "maintenance" && !members.every((u) => keys.get(u)!.names.has(key) || keys.get(u)!.testOnly))
        continue;
      if (
        best === null ||
        significance > best.significance ||
        (significance === best.significance && members.length > best.units.length)
      )
        best = { kind, name: nameOf(key, members, keys), units: members, significance };
    }
    if (best === null) break;
    themes.push(best);
    for (const u of best.units) open.splice(open.indexOf(u), 1);
  }
  const rest: ChangeUnit[] = [];
  for (const u of open) {
    const { kind, significance } = scoreTheme([u]);
    // A direct commit (an initial import) is no story; a PR adding new work or a workflow is.
    if ((kind === "capability" && u.pr !== null) || kind === "workflow_introduced")
      themes.push({ kind, name: u.title, units: [u], significance });
    else rest.push(u);
  }
  return { themes, rest };
}

/** A key's units, and the open units sharing a name most of them share (one capability, not two halves); work on tests alone stays out of other work. */
function expand(key: string, group: ChangeUnit[], open: ChangeUnit[], keys: Map<ChangeUnit, Keys>): ChangeUnit[] {
  const counts = new Map<string, number>();
  for (const u of group) for (const k of keys.get(u)!.names) if (k !== key) counts.set(k, (counts.get(k) ?? 0) + 1);
  const common = new Set([...counts].filter(([, n]) => n >= 2 && n * 2 >= group.length).map(([k]) => k));
  const members = new Set(group);
  if (common.size > 0)
    for (const u of open) if (!members.has(u) && [...keys.get(u)!.names].some((k) => common.has(k))) members.add(u);
  const all = open.filter((u) => members.has(u));
  const work = all.filter((u) => !keys.get(u)!.testOnly);
  return work.length > 0 ? work : all;
}

/** What the theme is called: the name most of its units share (a scope or directory before a title word). */
function nameOf(key: string, members: ChangeUnit[], keys: Map<ChangeUnit, Keys>): string {
  const score = new Map<string, number>();
  for (const u of members) {
    const k = keys.get(u)!;
    for (const n of k.all) score.set(n, (score.get(n) ?? 0) + (k.names.has(n) ? 1.5 : 1));
  }
  const best = [...score].sort(
    (a, b) =>
      b[1] - a[1] || b[0].length - a[0].length || (a[0] === key ? -1 : b[0] === key ? 1 : a[0].localeCompare(b[0])),
  )[0];
  return best?.[0] ?? key;
}

/** A title without its `type(scope):` or `scope:` prefix, which the theme's name already says. */
const withoutScope = (title: string) =>
  titleScope(title) !== null || /^[a-z]+(?:\([^)]*\))?!?:\s/.test(title) ? title.replace(/^[^:]*:\s*/, "") : title;
const quoted = (u: ChangeUnit) => `${ref(u)} "${u.title}"`;
const fileEvidence = (p: string): Evidence => ({ type: "file", id: p, path: p });

/** The first "why" the theme's PR bodies give: the one adding the most files first. */
function why(us: ChangeUnit[]): string {
  const byAdds = [...us].sort(
    (a, b) =>
      b.commit.files.filter((f) => f.change === "added").length -
      a.commit.files.filter((f) => f.change === "added").length,
  );
  for (const u of byAdds) {
    const s = firstSentence(u.body);
    if (s) return ` ${s}`;
  }
  return "";
}

/** A theme as a highlight: a headline, 2–3 sentences on what changed and why, and its evidence. */
export function themeHighlight(t: Theme): { category: string; title: string; summary: string; evidence: Evidence[] } {
  const first = t.units[0]!;
  const last = t.units.at(-1)!;
  const n = t.units.length;
  const size = lines(t.units);
  const sized = t.units.some((u) => u.commit.lines_changed !== undefined) ? `, ${size} lines changed` : "";
  const name = t.name.replace(/^file:/, "");
  const prs = t.units.map(unitEvidence);
  switch (t.kind) {
    case "capability": {
      const added = addedFiles(t.units, isNewWork);
      const span =
        n > 1 ? `It began with ${quoted(first)} and ended with ${quoted(last)}.` : `It came in ${quoted(first)}.`;
      return {
        category: "capability",
        title: n > 1 ? `${name}: ${withoutScope(first.title)} (${plural(n, "PR")})` : first.title,
        summary: `${plural(n, "change")} built ${n > 1 ? name : "something new"}: ${plural(added.length, "new file")}${sized}. ${span}${why(t.units)}`,
        evidence: [...prs, ...added.slice(0, 3).map(fileEvidence)],
      };
    }
    case "workflow_introduced": {
      const added = addedFiles(t.units, isWorkflow);
      const adder = t.units.find((u) => u.commit.files.some((f) => f.change === "added" && isWorkflow(f.path)))!;
      const later = t.units.filter((u) => Date.parse(u.at) > Date.parse(adder.at));
      const fixes =
        later.length > 0
          ? `; ${plural(later.length, "later change")} fixed it (${later.slice(0, 4).map(ref).join(", ")}${later.length > 4 ? ", …" : ""})`
          : "";
      return {
        category: "workflow",
        title: `New workflow${added.length > 1 ? "s" : ""}: ${added.slice(0, 2).join(", ")}${added.length > 2 ? ", …" : ""}${later.length > 0 ? `, then fixed (${plural(later.length, "PR")})` : ""}`,
        summary: `${quoted(adder)} added ${added.length > 1 ? "them" : "it"}${fixes}.${why(t.units)}`,
        evidence: [...added.slice(0, 3).map(fileEvidence), ...prs],
      };
    }
    case "workflow_reworked": {
      const files = touched(t.units).filter(isWorkflow).sort();
      return {
        category: "workflow",
        title: `${files.length === 1 ? files[0] : `${plural(files.length, "workflow")} (${name})`} reworked (${plural(n, "PR")})`,
        summary: `${plural(n, "change")} reworked ${files.slice(0, 3).join(", ")}${files.length > 3 ? ", …" : ""}${sized}, from ${quoted(first)} to ${quoted(last)}.${why(t.units)}`,
        evidence: [...files.slice(0, 3).map(fileEvidence), ...prs],
      };
    }
    case "maintenance": {
      const paths = touched(t.units);
      const tests = paths.every(isTestPath);
      return {
        category: tests ? "test" : paths.every((p) => pathCategory(p) === "docs") ? "docs" : "code",
        title: tests
          ? `Tests only: ${plural(n, "change")} to ${plural(paths.length, "test file")}`
          : `${name}: ${plural(n, "small change")}`,
        summary: `${plural(n, "small change")} touched ${name}${sized}, from ${quoted(first)} to ${quoted(last)}.${why(t.units) || " None of them added a file."}`,
        evidence: prs.slice(-5),
      };
    }
  }
}
