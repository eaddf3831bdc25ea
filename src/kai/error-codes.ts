/** The error codes src/kai raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    kai_bad_github_repo: "usage";
    kai_git_failed: "unavailable";
    kai_git_unavailable: "unavailable";
    kai_git_too_old: "unavailable";
    kai_git_unreadable: "unavailable";
    kai_github_failed: "unavailable";
    kai_not_a_repository: "usage";
    kai_repo_not_found: "usage";
  }
}

export {};
