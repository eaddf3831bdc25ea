/// <reference lib="dom" />
/** Entries: the list (newest first, filtered) and one entry's detail with what a person may do to it. */
import { api, button, errorText, h, jsonDetails, main, stateBadge, time, type Json } from "./dom.js";
import { STATUSES, type WhoAmI } from "./board.js";
import type { Page } from "./list.js";
import { pullWithDiff } from "./prs.js";
import { entryTitle, filterBar, pagedTable, type Run, type StoredEntry } from "./widgets.js";

const TERMINAL = ["done", "error", "canceled"];
const RUN_TERMINAL = ["succeeded", "failed", "canceled"];

export function entriesPage(who: WhoAmI): void {
  const roles = [...new Set([...who.lanes.flatMap((l) => l.roles), ...who.humans])];
  const holder = h("div", {});
  const show = (f: Record<string, string>) =>
    holder.replaceChildren(
      pagedTable<StoredEntry>({
        id: "entries",
        path: "/v1/entries",
        params: { status: f.status, to: f.to },
        keep: (s) =>
          (!f.status || s.entry.status === f.status) &&
          (!f.to || s.entry.to === f.to) &&
          (!f.kind || s.entry.kind.includes(f.kind)),
        head: ["entry", "kind", "from → to", "status", "updated"],
        empty: "no entries match",
        row: (s) =>
          h(
            "tr",
            { "data-entry-row": s.entry.id },
            h("td", {}, h("a", { href: `#/entries/${encodeURIComponent(s.entry.id)}` }, s.entry.id)),
            h("td", {}, entryTitle(s.entry)),
            h("td", {}, `${s.entry.from} → ${s.entry.to}`),
            h("td", {}, stateBadge(s.entry.status)),
            h("td", {}, time(s.entry.updated_at)),
          ),
      }),
    );
  let kind = "";
  const kindInput = h("input", {
    type: "search",
    id: "filter-kind",
    placeholder: "kind contains…",
  }) as HTMLInputElement;
  let values: Record<string, string> = {};
  kindInput.addEventListener("change", () => {
    kind = kindInput.value.trim();
    show({ ...values, kind });
  });
  const bar = filterBar(
    [
      { name: "status", label: "status", options: STATUSES },
      { name: "to", label: "role", options: roles },
    ],
    (v) => {
      values = v;
      show({ ...v, kind });
    },
  );
  bar.append(h("label", { for: "filter-kind" }, "kind "), kindInput);
  main().replaceChildren(h("h1", {}, "Entries"), bar, holder);
  show({});
}

interface HistoryRecord {
  seq: number;
  version: number;
  at: string;
  actor: string;
  action: string;
  from_status: string | null;
  to_status: string;
  changes: Json;
}

interface ActionRecord {
  idempotency_key: string;
  run_id: string;
  action: string;
  state: string;
  result: Json | null;
  error: { code: string; message: string } | null;
}

/** Pull request numbers the OPEN_PR actions of these runs got back. */
export async function pullNumbers(runIds: string[]): Promise<number[]> {
  const numbers = new Set<number>();
  for (const id of runIds) {
    const list = await api<Page<ActionRecord>>("GET", `/v1/actions?run=${encodeURIComponent(id)}&limit=500`);
    for (const a of list.items)
      if (a.action === "OPEN_PR" && typeof a.result?.number === "number") numbers.add(a.result.number);
  }
  return [...numbers].sort((a, b) => b - a);
}

export async function entryPage(id: string, refresh: () => void): Promise<void> {
  const path = `/v1/entries/${encodeURIComponent(id)}`;
  const [stored, historyPage, runsAnswer] = await Promise.all([
    api<StoredEntry>("GET", path),
    api<Page<HistoryRecord>>("GET", `${path}/history?limit=500`),
    api<Page<Run>>("GET", `/v1/runs?entry=${encodeURIComponent(id)}&order=newest&limit=500`),
  ]);
  const history = historyPage.items;
  const runs = runsAnswer.items;
  const e = stored.entry;
  const error = h("p", { class: "error", role: "alert", id: "entry-error" });
  const outcome = h("p", { role: "status", id: "entry-outcome" });
  const actions = h("div", { class: "actions", id: "entry-actions" });
  const active = runs.find((r) => !RUN_TERMINAL.includes(r.state));
  const fail = (err: unknown) => (error.textContent = errorText(err));
  if (!TERMINAL.includes(e.status)) {
    actions.append(
      button(
        active ? `Cancel (stops run ${active.id})` : "Cancel entry",
        async () => {
          try {
            if (active)
              await api("POST", `/v1/runs/${encodeURIComponent(active.id)}/cancel`, {
                reason: `canceled from the console`,
              });
            else
              await api("POST", `${path}/status`, {
                status: "canceled",
                expected_version: stored.version,
                note: "canceled from the console",
              });
            refresh();
          } catch (err) {
            fail(err);
          }
        },
        { id: "cancel-entry" },
      ),
    );
  } else {
    actions.append(
      button(
        "Re-open as a new entry",
        async () => {
          try {
            const body: Json = { to: e.to, kind: e.kind, payload: e.payload, note: `re-opened from ${e.id}` };
            const created = await api<StoredEntry>("POST", "/v1/entries", body);
            outcome.replaceChildren(
              "posted ",
              h("a", { href: `#/entries/${encodeURIComponent(created.entry.id)}`, id: "reopened" }, created.entry.id),
            );
          } catch (err) {
            fail(err);
          }
        },
        { id: "reopen-entry" },
      ),
    );
  }
  // An open entry with no run: start its role's run here (the server asks the OA gate and claims it).
  if (e.status === "open" && !active) {
    actions.append(
      " ",
      button(
        "Run",
        async () => {
          try {
            const run = await api<{ id: string }>("POST", `${path}/runs`);
            location.hash = `#/runs/${encodeURIComponent(run.id)}`;
          } catch (err) {
            fail(err);
          }
        },
        { id: "run-entry" },
      ),
    );
  }
  if (active?.state === "waiting")
    actions.append(
      " ",
      h("a", { href: `#/runs/${encodeURIComponent(active.id)}`, class: "button" }, "Resume the waiting run…"),
    );

  const prs = h("div", { id: "entry-prs" });
  main().replaceChildren(
    h("h1", {}, `Entry ${e.id} `, stateBadge(e.status)),
    h(
      "p",
      { class: "muted" },
      `${e.kind} · ${e.from} → ${e.to} · v${stored.version}${stored.claimed_by ? ` · claimed by ${stored.claimed_by}` : ""} · updated `,
      time(e.updated_at),
    ),
    actions,
    outcome,
    error,
    h(
      "div",
      { class: "tiles" },
      h(
        "section",
        { class: "tile", "aria-labelledby": "payload-h" },
        h("h2", { id: "payload-h" }, "Payload"),
        h("pre", { id: "entry-payload" }, JSON.stringify(e.payload, null, 2)),
        jsonDetails("whole entry", e),
      ),
      h(
        "section",
        { class: "tile", "aria-labelledby": "runs-h" },
        h("h2", { id: "runs-h" }, "Runs"),
        runs.length
          ? h(
              "ul",
              { id: "entry-runs" },
              ...runs.map((r) =>
                h(
                  "li",
                  { "data-run": r.id },
                  h("a", { href: `#/runs/${encodeURIComponent(r.id)}` }, r.id),
                  " ",
                  stateBadge(r.state),
                  ` ${r.role} · attempt ${r.attempt} · started `,
                  time(r.created_at),
                ),
              ),
            )
          : h("p", { class: "muted" }, "no runs yet"),
      ),
    ),
    h(
      "section",
      { class: "tile", "aria-labelledby": "history-h" },
      h("h2", { id: "history-h" }, "History"),
      h(
        "ol",
        { class: "timeline", id: "entry-history" },
        ...history.map((r) =>
          h(
            "li",
            { "data-version": String(r.version) },
            time(r.at),
            ` v${r.version} ${r.action} by ${r.actor} · ${r.from_status ?? "—"} → ${r.to_status}`,
            jsonDetails("changes", r.changes),
          ),
        ),
      ),
    ),
    prs,
  );
  try {
    for (const n of await pullNumbers(runs.map((r) => r.id))) prs.append(await pullWithDiff(n));
  } catch (err) {
    prs.append(h("p", { class: "error" }, errorText(err)));
  }
}
