/// <reference lib="dom" />
/** Pull requests of the local forge and their diffs. */
import { api, button, errorText, h, main, stateBadge, time } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
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
    const cls =
      line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")
        ? "file"
        : line.startsWith("+")
          ? "add"
          : line.startsWith("-")
            ? "del"
            : line.startsWith("@@")
              ? "hunk"
              : "";
    pre.append(h("span", cls ? { class: `line ${cls}` } : { class: "line" }, line));
  }
  return pre;
}

/** A diff taken apart per file (at its `diff --git` lines): each file's path and its lines added and removed. */
export function fileDiffs(diff: string): Array<{ path: string; text: string; added: number; removed: number }> {
  const files: Array<{ path: string; text: string; added: number; removed: number }> = [];
  let lines: string[] = [];
  const flush = () => {
    if (lines.length === 0) return;
    const head = lines[0]!;
    const plus = lines.find((l) => l.startsWith("+++ "));
    const path = plus && plus !== "+++ /dev/null" ? plus.slice(6) : (/^diff --git a\/(.*) b\//.exec(head)?.[1] ?? head);
    const body = lines.filter((l) => !l.startsWith("+++ ") && !l.startsWith("--- "));
    files.push({
      path,
      text: lines.join("\n"),
      added: body.filter((l) => l.startsWith("+")).length,
      removed: body.filter((l) => l.startsWith("-")).length,
    });
    lines = [];
  };
  for (const line of diff.split("\n")) {
    if (line.startsWith("diff --git ")) flush();
    if (line !== "" || lines.length > 0) lines.push(line);
  }
  flush();
  return files;
}

/** One row of a side-by-side diff: the old line (number, text) beside the new one; either may be absent. */
export interface SideRow {
  kind: "hunk" | "same" | "change";
  old: { n: number; text: string } | null;
  new: { n: number; text: string } | null;
}

/**
 * A file's unified diff as side-by-side rows: context on both sides, each run of removed lines
 * paired with the run of added lines after it (the longer run's extra lines face a gap).
 */
export function sideBySide(text: string): SideRow[] {
  const rows: SideRow[] = [];
  let oldN = 0;
  let newN = 0;
  let dels: string[] = [];
  let adds: string[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
      rows.push({
        kind: "change",
        old: i < dels.length ? { n: oldN++, text: dels[i]! } : null,
        new: i < adds.length ? { n: newN++, text: adds[i]! } : null,
      });
    }
    dels = [];
    adds = [];
  };
  let inHunk = false;
  for (const line of text.split("\n")) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      flush();
      oldN = Number(hunk[1]);
      newN = Number(hunk[2]);
      inHunk = true;
      rows.push({ kind: "hunk", old: null, new: { n: 0, text: line } });
    } else if (!inHunk) continue;
    else if (line.startsWith("-")) dels.push(line.slice(1));
    else if (line.startsWith("+")) adds.push(line.slice(1));
    else if (line.startsWith("\\")) continue;
    else {
      flush();
      rows.push({ kind: "same", old: { n: oldN++, text: line.slice(1) }, new: { n: newN++, text: line.slice(1) } });
    }
  }
  flush();
  return rows;
}

function sideTable(text: string): HTMLElement {
  const cell = (side: SideRow["old"], cls: string) => [
    h("td", { class: "n" }, side ? String(side.n) : ""),
    h("td", { class: side ? cls : "gap" }, side?.text ?? ""),
  ];
  return h(
    "table",
    { class: "diff-side" },
    // Fixed layout takes its widths from here (the first row is a hunk header spanning all four).
    h("colgroup", {}, h("col", { class: "n" }), h("col", {}), h("col", { class: "n" }), h("col", {})),
    h(
      "tbody",
      {},
      ...sideBySide(text).map((r) =>
        r.kind === "hunk"
          ? h("tr", { class: "hunk" }, h("td", { colspan: "4" }, r.new!.text))
          : h(
              "tr",
              { class: r.kind },
              ...cell(r.old, r.kind === "change" ? "del" : ""),
              ...cell(r.new, r.kind === "change" ? "add" : ""),
            ),
      ),
    ),
  );
}

export type DiffLayout = "unified" | "side";
const LAYOUT_KEY = "pmagent.diff.layout";
const savedLayout = (): DiffLayout => (localStorage.getItem(LAYOUT_KEY) === "side" ? "side" : "unified");

/** Files folded one by one (each open unless the diff is long), or the diff as one block when it names no file. */
const OPEN_LINES = 400;
export function diffView(diff: string, layout: DiffLayout = savedLayout()): HTMLElement {
  const files = fileDiffs(diff);
  if (files.length === 0 || !files[0]!.text.startsWith("diff --git ")) return diffBlock(diff);
  const long = diff.split("\n").length > OPEN_LINES;
  const view = h(
    "div",
    { class: "diff-files", "data-layout": layout },
    ...files.map((f) => {
      const d = h(
        "details",
        { class: "diff-file", "data-file": f.path },
        h(
          "summary",
          {},
          h("code", {}, f.path),
          " ",
          h("span", { class: "add-count" }, `+${f.added}`),
          " ",
          h("span", { class: "del-count" }, `−${f.removed}`),
        ),
        layout === "side" ? sideTable(f.text) : diffBlock(f.text),
      );
      if (!long) d.setAttribute("open", "");
      return d;
    }),
  );
  // The layout a person picks is kept for the next diff they open.
  const pick = (next: DiffLayout) => () => {
    localStorage.setItem(LAYOUT_KEY, next);
    holder.replaceWith(diffView(diff, next));
  };
  const toggle = (label: string, value: DiffLayout) =>
    h(
      "button",
      { type: "button", class: "layout", "aria-pressed": String(layout === value), "data-layout-pick": value },
      label,
    );
  const unified = toggle("Unified", "unified");
  const side = toggle("Side by side", "side");
  unified.addEventListener("click", pick("unified"));
  side.addEventListener("click", pick("side"));
  const holder = h(
    "div",
    { class: "diff-holder" },
    h("div", { class: "actions", role: "group", "aria-label": "diff layout" }, unified, " ", side),
    view,
  );
  return holder;
}

interface PullComment {
  id: string;
  author: string;
  body: string;
  path: string | null;
  line: number | null;
  created_at: string;
}

/** A pull request's review comments (safe Markdown), and a form to add one on the change or on a file's line. */
function commentsSection(number: number, files: string[]): HTMLElement {
  const list = h("ol", { class: "plain comments", id: `pr-comments-${number}` });
  const error = h("p", { class: "error", role: "alert" });
  const show = (c: PullComment) =>
    h(
      "li",
      { "data-comment": c.id },
      h(
        "p",
        { class: "muted" },
        h("strong", {}, c.author),
        c.path ? " on " : "",
        c.path ? h("code", {}, `${c.path}${c.line ? `:${c.line}` : ""}`) : "",
        " · ",
        time(c.created_at),
      ),
      renderMarkdown(c.body),
    );
  const load = () =>
    api<{ items: PullComment[] }>("GET", `/v1/prs/${number}/comments`)
      .then((d) =>
        list.replaceChildren(
          ...(d.items.length ? d.items.map(show) : [h("li", { class: "muted" }, "no review comments yet")]),
        ),
      )
      .catch((err: unknown) => (error.textContent = errorText(err)));
  const body = h("textarea", {
    name: "body",
    rows: "3",
    required: "",
    "aria-label": "review comment",
  }) as HTMLTextAreaElement;
  const path = h(
    "select",
    { name: "path", "aria-label": "the comment is about" },
    h("option", { value: "" }, "the whole change"),
    ...files.map((f) => h("option", { value: f }, f)),
  ) as HTMLSelectElement;
  const line = h("input", {
    type: "number",
    name: "line",
    min: "1",
    step: "1",
    placeholder: "line",
    "aria-label": "line",
    class: "narrow",
  }) as HTMLInputElement;
  const form = h(
    "form",
    { class: "comment", id: `pr-comment-${number}` },
    body,
    h("div", { class: "actions" }, path, " ", line, " ", h("button", { type: "submit" }, "Comment")),
    error,
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const comment = { body: body.value, path: path.value || null, line: line.value ? Number(line.value) : null };
    api<PullComment>("POST", `/v1/prs/${number}/comments`, comment)
      .then(() => {
        body.value = "";
        line.value = "";
        error.textContent = "";
        return load();
      })
      .catch((err: unknown) => (error.textContent = errorText(err)));
  });
  void load();
  return h("section", { class: "pr-comments" }, h("h3", {}, "Review comments"), list, form);
}

/** One pull request with its diff, fetched from GET /v1/prs/{number}/diff; an open one with Merge and Close. */
export async function pullWithDiff(number: number): Promise<HTMLElement> {
  const box = h("section", { class: "tile pr", "data-pr": String(number), "aria-labelledby": `pr-${number}-h` });
  await fillPull(box, number);
  return box;
}

async function fillPull(box: HTMLElement, number: number): Promise<void> {
  try {
    const d = await api<PullDiff>("GET", `/v1/prs/${number}/diff`);
    const p = d.pull;
    const error = h("p", { class: "error", role: "alert" });
    // Merging or closing as the signed-in person (the server refuses anyone not among the humans).
    const decide = (verb: "merge" | "close") => async () => {
      try {
        await api("POST", `/v1/prs/${number}/${verb}`);
        box.replaceChildren();
        await fillPull(box, number);
      } catch (err) {
        error.textContent = errorText(err);
      }
    };
    box.replaceChildren(
      h("h2", { id: `pr-${number}-h` }, `PR #${p.number} `, stateBadge(p.state), ` ${p.title}`),
      h(
        "p",
        { class: "muted" },
        h("code", {}, p.head),
        " → ",
        h("code", {}, p.base),
        ` · ${p.head_sha.slice(0, 12)} · opened `,
        time(p.created_at),
        ` · ${p.url}`,
      ),
      p.state === "open"
        ? h(
            "div",
            { class: "actions" },
            button("Merge", decide("merge"), { id: `pr-merge-${number}` }),
            " ",
            button("Close", decide("close"), { id: `pr-close-${number}` }),
          )
        : p.state === "merged"
          ? h(
              "p",
              { class: "muted", id: `pr-merged-${number}` },
              "Merged into ",
              h("code", {}, p.base),
              " in the forge's repository.",
            )
          : "",
      error,
      p.body ? h("p", {}, p.body) : "",
      h("pre", { class: "stat" }, d.stat || "(no changes)"),
      d.truncated ? h("p", { class: "muted" }, "The diff is long: only its first 512 KiB are shown.") : "",
      diffView(d.diff),
      commentsSection(
        number,
        fileDiffs(d.diff).map((f) => f.path),
      ),
    );
  } catch (err) {
    box.replaceChildren(h("h2", { id: `pr-${number}-h` }, `PR #${number}`), h("p", { class: "error" }, errorText(err)));
  }
}

export function prsPage(): void {
  main().replaceChildren(
    h("h1", {}, "Pull requests (local forge)"),
    pagedTable<PullRequest>({
      id: "prs",
      path: "/v1/prs",
      head: ["#", "title", "head → base", "state", "opened"],
      empty: "no pull requests in the local forge",
      row: (p) =>
        h(
          "tr",
          { "data-pr-row": String(p.number) },
          h("td", {}, h("a", { href: `#/prs/${p.number}` }, `#${p.number}`)),
          h("td", {}, p.title),
          h("td", {}, `${p.head} → ${p.base}`),
          h("td", {}, stateBadge(p.state)),
          h("td", {}, time(p.created_at)),
        ),
    }),
  );
}

export async function prPage(number: number): Promise<void> {
  main().replaceChildren(h("p", {}, h("a", { href: "#/prs" }, "← pull requests")), await pullWithDiff(number));
}
