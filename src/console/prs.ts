/// <reference lib="dom" />
/** Pull requests of the local forge and their diffs. */
import { api, errorText, h, main, stateBadge, time } from "./dom.js";
import { pagedTable } from "./widgets.js";

export interface PullRequest {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  head_sha: string;
  state: string;
  created_at: string;
  url: string;
}

interface PullDiff {
  pull: PullRequest;
  stat: string;
  diff: string;
  truncated: boolean;
}

/** A unified diff with its added, removed and hunk lines marked (text only). */
export function diffBlock(diff: string): HTMLElement {
  const pre = h("pre", { class: "diff" });
  for (const line of diff.split("\n")) {
    const cls = line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") ? "file" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "";
    pre.append(h("span", cls ? { class: `line ${cls}` } : { class: "line" }, line));
  }
  return pre;
}

/** One pull request with its diff, fetched from GET /v1/prs/{number}/diff. */
export async function pullWithDiff(number: number): Promise<HTMLElement> {
  const box = h("section", { class: "tile pr", "data-pr": String(number), "aria-labelledby": `pr-${number}-h` });
  try {
    const d = await api<PullDiff>("GET", `/v1/prs/${number}/diff`);
    const p = d.pull;
    box.append(
      h("h2", { id: `pr-${number}-h` }, `PR #${p.number} `, stateBadge(p.state), ` ${p.title}`),
      h("p", { class: "muted" }, h("code", {}, p.head), " → ", h("code", {}, p.base), ` · ${p.head_sha.slice(0, 12)} · opened `, time(p.created_at), ` · ${p.url}`),
      p.body ? h("p", {}, p.body) : "",
      h("pre", { class: "stat" }, d.stat || "(no changes)"),
      d.truncated ? h("p", { class: "muted" }, "The diff is long: only its first 512 KiB are shown.") : "",
      diffBlock(d.diff),
    );
  } catch (err) {
    box.append(h("h2", { id: `pr-${number}-h` }, `PR #${number}`), h("p", { class: "error" }, errorText(err)));
  }
  return box;
}

export function prsPage(): void {
  main().replaceChildren(
    h("h1", {}, "Pull requests (local forge)"),
    pagedTable<PullRequest>({
      id: "prs",
      path: "/v1/prs",
      head: ["#", "title", "head → base", "state", "opened"],
      empty: "no pull requests in the local forge",
      row: (p) => h("tr", { "data-pr-row": String(p.number) }, h("td", {}, h("a", { href: `#/prs/${p.number}` }, `#${p.number}`)), h("td", {}, p.title), h("td", {}, `${p.head} → ${p.base}`), h("td", {}, stateBadge(p.state)), h("td", {}, time(p.created_at))),
    }),
  );
}

export async function prPage(number: number): Promise<void> {
  main().replaceChildren(h("p", {}, h("a", { href: "#/prs" }, "← pull requests")), await pullWithDiff(number));
}
