import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A git repository built by a test, with commits at chosen times. */
export class TestRepo {
  readonly dir: string;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "pmagent-kai-"));
    this.git("init", "-q", "-b", "main");
    this.git("config", "user.email", "kai@test.invalid");
    this.git("config", "user.name", "Kai Test");
    this.git("config", "commit.gpgsign", "false");
  }

  git(...args: string[]): string {
    return execFileSync("git", args, { cwd: this.dir, encoding: "utf8", env: { ...process.env, ...this.dateEnv } });
  }

  private dateEnv: Record<string, string> = {};

  write(path: string, text: string): void {
    const file = join(this.dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }

  /** Commit `files` (null deletes) at `at` (author and committer date); returns the sha. */
  commit(at: string, message: string, files: Record<string, string | null> = {}): string {
    for (const [path, text] of Object.entries(files)) {
      if (text === null) this.git("rm", "-q", path);
      else {
        this.write(path, text);
        this.git("add", path);
      }
    }
    this.dateEnv = { GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at };
    try {
      this.git("commit", "-q", "--allow-empty", "-m", message);
    } finally {
      this.dateEnv = {};
    }
    return this.git("rev-parse", "HEAD").trim();
  }

  rename(at: string, from: string, to: string, message: string): string {
    mkdirSync(dirname(join(this.dir, to)), { recursive: true });
    this.git("mv", from, to);
    return this.commit(at, message);
  }

  /** A branch with its commits merged back with a merge commit (`git merge --no-ff`). */
  mergeBranch(
    at: string,
    branch: string,
    message: string,
    commits: Array<{ at: string; message: string; files: Record<string, string | null> }>,
  ): string {
    this.git("checkout", "-q", "-b", branch);
    for (const c of commits) this.commit(c.at, c.message, c.files);
    this.git("checkout", "-q", "main");
    this.dateEnv = { GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at };
    try {
      this.git("merge", "-q", "--no-ff", branch, "-m", message);
    } finally {
      this.dateEnv = {};
    }
    return this.git("rev-parse", "HEAD").trim();
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
