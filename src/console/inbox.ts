/// <reference lib="dom" />
/** What waits for a person: waiting runs (with their resume forms), proposals, entries for a human, OA denials. */
import { api, h, main, stateBadge, time } from "./dom.js";
import { proposalRow, type Proposal } from "./proposals.js";
import { entryTitle, resumeForm, type Run, type StoredEntry } from "./widgets.js";

interface Inbox {
  waiting_runs: Run[];
  proposals: Proposal[];
  entries: StoredEntry[];
  denials: Array<{
    entry_id: string;
    role: string;
    reasoning: string;
    conditions: string[];
    at: string;
    entry: StoredEntry;
  }>;
}

const section = (id: string, title: string, count: number, ...body: Array<Node | string>) =>
  h(
    "section",
    { class: "tile", id, "aria-labelledby": `${id}-h` },
    h("h2", { id: `${id}-h` }, `${title} `, h("span", { class: "count" }, String(count))),
    ...body,
  );

const entryLink = (id: string) => h("a", { href: `#/entries/${encodeURIComponent(id)}` }, id);

export async function inboxPage(refresh: () => void): Promise<void> {
  const i = await api<Inbox>("GET", "/v1/inbox");
  const error = h("p", { class: "error", role: "alert" });
  const runs = i.waiting_runs.map((r) =>
    h(
      "article",
      { class: "item", "data-waiting-run": r.id },
      h("h3", {}, h("a", { href: `#/runs/${encodeURIComponent(r.id)}` }, r.id), " ", stateBadge(r.state)),
      h(
        "p",
        { class: "muted" },
        `${r.role}`,
        r.entry_id ? " · entry " : "",
        r.entry_id ? entryLink(r.entry_id) : "",
        " · waiting since ",
        time(r.updated_at),
      ),
      resumeForm(r, refresh),
    ),
  );
  const proposals = i.proposals.map((p) => proposalRow(p, error));
  const entries = i.entries.map((s) =>
    h(
      "li",
      { "data-inbox-entry": s.entry.id },
      entryLink(s.entry.id),
      " ",
      entryTitle(s.entry),
      ` · from ${s.entry.from} to ${s.entry.to} · `,
      stateBadge(s.entry.status),
      " · ",
      time(s.entry.updated_at),
    ),
  );
  const denials = i.denials.map((d) =>
    h(
      "li",
      { "data-denial": d.entry_id },
      entryLink(d.entry_id),
      ` ${d.entry.entry.kind} for ${d.role} · denied `,
      time(d.at),
      h("p", {}, d.reasoning || "no reason given"),
      d.conditions.length ? h("ul", {}, ...d.conditions.map((c) => h("li", {}, c))) : null,
    ),
  );
  const total = runs.length + proposals.length + entries.length + denials.length;
  main().replaceChildren(
    h("h1", {}, "Inbox"),
    h(
      "p",
      { class: "muted", id: "inbox-summary" },
      total === 0
        ? "Nothing waits for a person right now."
        : `${total} item${total === 1 ? "" : "s"} wait for a person.`,
    ),
    error,
    h(
      "div",
      { class: "tiles" },
      section(
        "inbox-runs",
        "Runs waiting for input",
        runs.length,
        ...(runs.length ? runs : [h("p", { class: "muted" }, "no run waits for input")]),
      ),
      section(
        "inbox-proposals",
        "Environment proposals",
        proposals.length,
        proposals.length
          ? h("ul", { class: "plain" }, ...proposals)
          : h("p", { class: "muted" }, "no pending proposal"),
      ),
      section(
        "inbox-entries",
        "Entries addressed to a human",
        entries.length,
        entries.length ? h("ul", {}, ...entries) : h("p", { class: "muted" }, "none"),
      ),
      section(
        "inbox-denials",
        "Denied by the OA run gate",
        denials.length,
        denials.length ? h("ul", {}, ...denials) : h("p", { class: "muted" }, "none"),
      ),
    ),
  );
}
