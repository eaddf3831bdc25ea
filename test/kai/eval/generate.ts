import type { HistoryPr } from "../history.js";
import { prng } from "../../helpers/prng.js";

/**
 * Expands the evaluation set's compact description (weeks.ts) into squash-merged PRs in the
 * origin's shapes: titles and bodies as people write them, files changed by as many lines as such
 * a change takes. Deterministic: one seeded generator per project, so every run builds the same
 * repositories.
 */

export type Story =
  /** A capability built across `prs` PRs under `dir`, titled with its name (`scoped`: `name: …`). */
  | {
      id: string;
      kind: "capability";
      name: string;
      dir: string;
      prs: number;
      scoped: boolean;
      why: string;
      things: string[];
      titles?: string[];
    }
  /** A workflow added, then fixed by `fixes` PRs. */
  | { id: string; kind: "workflow_new"; name: string; fixes: number; why: string }
  /** An existing workflow rebuilt over `prs` PRs. */
  | { id: string; kind: "workflow_rebuild"; name: string; prs: number; why: string }
  /** The lane's cycles, each proposed, reviewed and applied to STATE by a PR of its own. */
  | { id: string; kind: "cycles"; numbers: number[] }
  /** A change merged early in the week and reverted later. */
  | { id: string; kind: "revert"; title: string; why: string }
  /** A STATE section other than the lane's rewritten. */
  | { id: string; kind: "state"; title: string; section: "infra"; text: string }
  /** Test fixtures regenerated: big, and never the week's news. */
  | { id: string; kind: "fixtures"; prs: number }
  /** Dependency bumps by a bot. */
  | { id: string; kind: "deps"; prs: number }
  /** A guide rewritten over a few PRs. */
  | { id: string; kind: "docs"; name: string; prs: number; why: string };

export interface WeekSpec {
  name: string;
  /** The lane asked about (layer/name); the project's first lane when absent. */
  lane?: string;
  stories: Story[];
  /** Background PRs (typo fixes, small tweaks, CI cache bumps, dependency bumps). */
  noise: number;
  /** The themes a person would name, most important first (story ids). */
  expected: string[];
}

export interface ProjectSpec {
  id: string;
  /** Monday of the first week (00:00Z). */
  start: string;
  /** The STATE document's headings: the lane section, the infra section, the gaps list. */
  headings: { lane: string; infra: string; gaps: string };
  seed: number;
  weeks: WeekSpec[];
}

export interface GeneratedProject {
  initial: { at: string; files: Record<string, string> };
  prs: HistoryPr[];
  /** Per week: each story's PR titles (titles are unique in a project). */
  stories: Array<Map<string, string[]>>;
  stateFile: string;
}

const DAY = 86_400_000;

const TYPO_TITLES = [
  "docs: fix typo in {g}",
  "Fix broken link in {g}",
  "docs: clarify a sentence in {g}",
  "Correct the example in {g}",
  "docs({g}): wording",
];
const TWEAK_TITLES = [
  "Tighten the timeout in {f}",
  "core: clarify the error for a missing key in {f}",
  "Log the retry count in {f}",
  "Rename a local in {f}",
  "core: drop an unused import from {f}",
  "Guard against an empty list in {f}",
];
const CI_TITLES = ["ci: bump cache key", "ci: pin node to 20.{n}", "ci: refresh the actions cache"];
const DEPS = ["vitest", "zod", "openai", "eslint", "typescript", "@octokit/rest", "commander", "pg"];
const REWORK = [
  "split lint and test into jobs",
  "cache node_modules between jobs",
  "run on merge_group",
  "move the matrix to a reusable workflow",
  "upload the coverage report",
  "gate the deploy step on review approval",
  "use the new token permissions",
  "retry flaky steps once",
  "post results as a PR comment",
  "run the slow suite nightly only",
  "add concurrency groups",
  "shard the test job",
  "build once, test on three OSes",
  "drop the legacy lint step",
];
const WF_FIXES = [
  "fix permissions for PR comments",
  "fix the trigger on labeled PRs",
  "pass the token to the checkout step",
  "quote the branch name",
  "skip drafts",
];

/** A file's lines, kept so that each change is a real diff of the size it claims. */
class Files {
  readonly text = new Map<string, string[]>();
  constructor(private readonly rnd: () => number) {}
  line(tag: string): string {
    return `${tag} ${Math.floor(this.rnd() * 1e9).toString(36)}`;
  }
  create(path: string, lines: number, tag = "//"): string {
    const out = Array.from({ length: lines }, () => this.line(tag));
    this.text.set(path, out);
    return `${out.join("\n")}\n`;
  }
  /** Replace `lines` lines (and append a few) of an existing file. */
  edit(path: string, lines: number, tag = "//"): string {
    const cur = this.text.get(path) ?? [];
    for (let i = 0; i < lines; i++) {
      if (cur.length > 0 && this.rnd() < 0.7) cur[Math.floor(this.rnd() * cur.length)] = this.line(tag);
      else cur.push(this.line(tag));
    }
    this.text.set(path, cur);
    return `${cur.join("\n")}\n`;
  }
}

function stateDoc(project: ProjectSpec, infra: string, lane: string, gaps: string[]): string {
  const h = project.headings;
  return `# ${project.id} current state\n\n## ${h.infra}\n\n${infra}\n\n## ${h.lane}\n\n${lane}\n\n### ${h.gaps}\n\n${gaps.map((g) => `- ${g}`).join("\n")}\n`;
}

export function generateProject(project: ProjectSpec): GeneratedProject {
  const rnd = prng(project.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const between = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const files = new Files(rnd);
  const stateFile = `STATE/${project.id}/current_state.md`;
  const start = Date.parse(project.start);
  const initial: Record<string, string> = {};
  let state = {
    infra: "Runners on the old fleet.",
    lane: "Cycle-0: the lane is being set up.",
    gaps: ["No cycle applied yet"],
  };
  initial[stateFile] = stateDoc(project, state.infra, state.lane, state.gaps);
  for (let i = 0; i < 12; i++) initial[`src/core/mod${i}.ts`] = files.create(`src/core/mod${i}.ts`, 60);
  for (let i = 0; i < 6; i++) initial[`docs/guide/g${i}.md`] = files.create(`docs/guide/g${i}.md`, 40, "text");
  for (const wf of ["ci", "review", "deploy"])
    initial[`.github/workflows/${wf}.yml`] = files.create(`.github/workflows/${wf}.yml`, 50, "#");
  initial["package.json"] = files.create("package.json", 30, "  ");
  initial["CHANGELOG.md"] = files.create("CHANGELOG.md", 20, "-");
  initial["package-lock.json"] = files.create("package-lock.json", 300, "  ");
  const prs: HistoryPr[] = [];
  const stories: Array<Map<string, string[]>> = [];
  const used = new Set<string>();
  const unique = (title: string) => {
    let t = title;
    for (let i = 2; used.has(t); i++) t = `${title} (${i})`;
    used.add(t);
    return t;
  };

  project.weeks.forEach((week, w) => {
    const base = start + w * 7 * DAY;
    // Work hours on the week's days; stories spread their PRs from Monday to Friday in order.
    const at = (day: number, hour: number) =>
      new Date(base + day * DAY + hour * 3_600_000 + between(0, 59) * 60_000).toISOString();
    const spread = (i: number, n: number) => at(Math.min(6, Math.floor((i * 5) / Math.max(n, 1))), 9 + ((i * 3) % 9));
    const byStory = new Map<string, string[]>();
    const add = (story: string | null, pr: Omit<HistoryPr, "title"> & { title: string }) => {
      const title = unique(pr.title);
      prs.push({ ...pr, title });
      if (story !== null) byStory.set(story, [...(byStory.get(story) ?? []), title]);
    };
    for (const s of week.stories) {
      switch (s.kind) {
        case "capability": {
          const Name = s.name[0]!.toUpperCase() + s.name.slice(1);
          for (let i = 0; i < s.prs; i++) {
            const thing = s.things[i % s.things.length]!;
            // `titles`: as people write them, not always naming what they build.
            const title =
              s.titles?.[i] ??
              (s.scoped
                ? `${s.name}: ${thing}`
                : i % 2 === 0
                  ? `${thing[0]!.toUpperCase()}${thing.slice(1)} for ${Name}`
                  : `${Name}: ${thing}`);
            const f: Record<string, string> = {};
            if (i === 0) {
              f[`${s.dir}/index.ts`] = files.create(`${s.dir}/index.ts`, between(40, 90));
              f[`${s.dir}/types.ts`] = files.create(`${s.dir}/types.ts`, between(30, 60));
            } else if (i === s.prs - 1 && s.prs > 3) {
              f[`docs/${s.name}.md`] = files.create(`docs/${s.name}.md`, between(40, 80), "text");
            } else if (i % 2 === 1) {
              f[`${s.dir}/part${i}.ts`] = files.create(`${s.dir}/part${i}.ts`, between(40, 120));
            } else {
              f[`${s.dir}/index.ts`] = files.edit(`${s.dir}/index.ts`, between(10, 40));
            }
            // Real capabilities touch shared code now and then, and the changelog.
            if (i % 3 === 2) f["src/core/mod0.ts"] = files.edit("src/core/mod0.ts", between(2, 6));
            f["CHANGELOG.md"] = files.edit("CHANGELOG.md", 1, "-");
            const test = `test/${s.name}/part${i}.test.ts`;
            f[test] = files.text.has(test) ? files.edit(test, between(5, 20)) : files.create(test, between(20, 50));
            const body =
              i === 0
                ? `${s.why}\n\n## What\n\n- ${thing}\n- tests for it\n\nFirst of ${s.prs}.`
                : `${thing[0]!.toUpperCase()}${thing.slice(1)}.\n\nPart of the ${s.name} work (${i + 1}/${s.prs}).`;
            add(s.id, { at: spread(i, s.prs), title, body, files: f });
          }
          break;
        }
        case "workflow_new": {
          const path = `.github/workflows/${s.name}.yml`;
          add(s.id, {
            at: spread(0, s.fixes + 1),
            title: `Add the ${s.name} workflow`,
            body: `${s.why}\n\nTriggered from the board; see the runbook.`,
            files: { [path]: files.create(path, between(60, 120), "#") },
          });
          for (let i = 0; i < s.fixes; i++) {
            const what = WF_FIXES[i % WF_FIXES.length]!;
            add(s.id, {
              at: spread(i + 1, s.fixes + 1),
              title: i % 2 === 0 ? `${s.name} workflow: ${what}` : `Fix ${s.name}.yml: ${what}`,
              body: `The first runs of the ${s.name} workflow failed: ${what}.`,
              files: { [path]: files.edit(path, between(3, 12), "#") },
            });
          }
          break;
        }
        case "workflow_rebuild": {
          const path = `.github/workflows/${s.name}.yml`;
          for (let i = 0; i < s.prs; i++) {
            const what = REWORK[i % REWORK.length]!;
            add(s.id, {
              at: spread(i, s.prs),
              title:
                i % 3 === 0
                  ? `${s.name} workflow: ${what}`
                  : i % 3 === 1
                    ? `ci(${s.name}): ${what}`
                    : `Rebuild ${s.name}.yml: ${what}`,
              body:
                i === 0
                  ? `${s.why}\n\nStep ${i + 1} of the rebuild.`
                  : `Step ${i + 1} of the ${s.name} workflow rebuild: ${what}.`,
              files: { [path]: files.edit(path, between(15, 45), "#") },
            });
          }
          break;
        }
        case "cycles": {
          s.numbers.forEach((n, i) => {
            const day = Math.min(4, Math.floor((i * 5) / s.numbers.length));
            const p = `reports/doc_update_proposals/cycle-${n}.json`;
            const r = `reports/doc_update_reviews/cycle-${n}.json`;
            add(s.id, {
              at: at(day, 9),
              title: `doc_update: proposal for cycle-${n}`,
              body: `Aya's proposal for cycle-${n} of the Layer B section.`,
              files: { [p]: files.create(p, between(30, 60), "  ") },
            });
            add(s.id, {
              at: at(day, 12),
              title: `Review doc_update proposal cycle-${n}`,
              body: `Sho approves cycle-${n} with edits.`,
              files: { [r]: files.create(r, between(20, 40), "  ") },
            });
            state = {
              ...state,
              lane: `Cycle-${n} applied: the section describes the lane as of cycle-${n}.`,
              gaps: [`PM snapshot lags cycle-${n}`],
            };
            add(s.id, {
              at: at(day, 16),
              title: `Apply doc_update proposal cycle-${n} to STATE`,
              body: `Tsugu applies the reviewed proposal for cycle-${n}, so the Layer B section says what the lane now does.`,
              files: { [stateFile]: stateDoc(project, state.infra, state.lane, state.gaps) },
            });
          });
          break;
        }
        case "revert": {
          const path = `src/core/mod${between(0, 11)}.ts`;
          add(s.id, {
            at: at(1, 10),
            title: s.title,
            body: "Speeds up start-up by caching.",
            files: { [path]: files.edit(path, between(20, 40)) },
          });
          add(s.id, {
            at: at(3, 15),
            title: `Revert "${s.title}"`,
            body: s.why,
            files: { [path]: files.edit(path, between(20, 40)) },
          });
          break;
        }
        case "state": {
          state = { ...state, infra: s.text };
          add(s.id, {
            at: at(2, 11),
            title: s.title,
            body: `${s.text}\n\nOnly the infra section changes.`,
            files: { [stateFile]: stateDoc(project, state.infra, state.lane, state.gaps) },
          });
          break;
        }
        case "fixtures": {
          for (let i = 0; i < s.prs; i++) {
            const path = `test/fixtures/recorded-${w}-${i}.json`;
            add(s.id, {
              at: at(i % 5, 14),
              title:
                i % 2 === 0
                  ? "test: regenerate the recorded board fixtures"
                  : "Add recorded GitHub responses for the forge tests",
              body: "Recorded from a real run; no code change.",
              files: { [path]: files.create(path, between(600, 1200), "  ") },
            });
          }
          break;
        }
        case "deps": {
          for (let i = 0; i < s.prs; i++) {
            const dep = DEPS[(w + i) % DEPS.length]!;
            const v = between(1, 9);
            add(s.id, {
              at: spread(i, s.prs),
              title: `chore(deps): bump ${dep} from 2.${v}.0 to 2.${v}.1`,
              body: `Bumps ${dep} from 2.${v}.0 to 2.${v}.1.\n\nDependabot will resolve any conflicts with this PR.`,
              files: {
                "package.json": files.edit("package.json", 1, "  "),
                "package-lock.json": files.edit("package-lock.json", between(4, 12), "  "),
              },
            });
          }
          break;
        }
        case "docs": {
          for (let i = 0; i < s.prs; i++) {
            const path = `docs/${s.name}/chapter${i}.md`;
            add(s.id, {
              at: spread(i, s.prs),
              title: i === 0 ? `Rewrite the ${s.name} guide: overview` : `${s.name} guide: rewrite chapter ${i}`,
              body: i === 0 ? s.why : `Chapter ${i} of the ${s.name} guide, rewritten.`,
              files: {
                [path]: files.text.has(path)
                  ? files.edit(path, between(60, 120), "text")
                  : files.create(path, between(60, 120), "text"),
              },
            });
          }
          break;
        }
      }
    }
    for (let i = 0; i < week.noise; i++) {
      const when = new Date(base + ((i + 0.5) / week.noise) * 7 * DAY).toISOString();
      const r = rnd();
      if (r < 0.3) {
        const g = `docs/guide/g${between(0, 5)}.md`;
        add(null, {
          at: when,
          title: pick(TYPO_TITLES).replace("{g}", g.split("/").pop()!.replace(".md", "")),
          files: { [g]: files.edit(g, 1, "text") },
        });
      } else if (r < 0.75) {
        const f = `src/core/mod${between(0, 11)}.ts`;
        const changelog: Record<string, string> =
          rnd() < 0.5 ? { "CHANGELOG.md": files.edit("CHANGELOG.md", 1, "-") } : {};
        add(null, {
          at: when,
          title: pick(TWEAK_TITLES).replace("{f}", f.split("/").pop()!.replace(".ts", "")),
          body: "Small fix found while reading the code.",
          files: { [f]: files.edit(f, between(1, 4)), ...changelog },
        });
      } else if (r < 0.9) {
        add(null, {
          at: when,
          title: pick(CI_TITLES).replace("{n}", String(between(1, 19))),
          body: "Keeps CI fast.",
          files: { ".github/workflows/ci.yml": files.edit(".github/workflows/ci.yml", 1, "#") },
        });
      } else {
        const dep = pick(DEPS);
        add(null, {
          at: when,
          title: `chore(deps): bump ${dep}`,
          body: `Bumps ${dep}.`,
          files: {
            "package.json": files.edit("package.json", 1, "  "),
            "package-lock.json": files.edit("package-lock.json", between(2, 6), "  "),
          },
        });
      }
    }
    stories.push(byStory);
  });
  return { initial: { at: new Date(start - DAY).toISOString(), files: initial }, prs, stories, stateFile };
}
