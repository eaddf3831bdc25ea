import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A squash-merged pull request: one commit on main titled `title (#number)`, its body the PR's. */
export interface HistoryPr {
  at: string;
  title: string;
  body?: string;
  /** path → new text (null deletes). */
  files: Record<string, string | null>;
}

/**
 * A repository with a long history written in one `git fast-import` (hundreds of PRs in well
 * under a second, where one `git commit` each would take many). PRs are numbered in time order
 * from `firstNumber`; the returned numbers are keyed by title.
 */
export class HistoryRepo {
  readonly dir: string;
  readonly numbers = new Map<string, number>();

  constructor(initial: { at: string; files: Record<string, string> }, prs: HistoryPr[], firstNumber = 100) {
    this.dir = mkdtempSync(join(tmpdir(), "pmagent-kai-history-"));
    execFileSync("git", ["init", "-q", "-b", "main", this.dir]);
    const chunks: string[] = [];
    const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
    const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);
    const commit = (mark: number, at: string, message: string, files: Record<string, string | null>) => {
      const who = `Dev <dev@example.invalid> ${seconds(at)} +0000`;
      const ops = Object.entries(files).map(([path, text]) =>
        text === null ? `D ${path}\n` : `M 100644 inline ${path}\n${data(text)}`,
      );
      chunks.push(
        `commit refs/heads/main\nmark :${mark}\nauthor ${who}\ncommitter ${who}\n${data(message)}${mark > 1 ? `from :${mark - 1}\n` : ""}${ops.join("")}\n`,
      );
    };
    commit(1, initial.at, "initial import", initial.files);
    const sorted = [...prs].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    sorted.forEach((pr, i) => {
      const number = firstNumber + i;
      this.numbers.set(pr.title, number);
      commit(i + 2, pr.at, `${pr.title} (#${number})${pr.body ? `\n\n${pr.body}` : ""}`, pr.files);
    });
    execFileSync("git", ["-C", this.dir, "fast-import", "--quiet"], { input: chunks.join("") });
    execFileSync("git", ["-C", this.dir, "checkout", "-q", "-f", "main"]);
  }

  pr(title: string): number {
    const n = this.numbers.get(title);
    if (n === undefined) throw new Error(`no PR titled ${title}`);
    return n;
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
