/// <reference lib="dom" />
/** Pieces several pages share: the resume form, filter bars and a paged table with "Load more". */
import { api, errorText, h, type Json } from "./dom.js";
import { InputInvalid, inputControl } from "./inputs.js";
import { fetchList, type ListRequest } from "./list.js";

export interface Run {
  id: string;
  role: string;
  state: string;
  entry_id: string | null;
  reason: string | null;
  attempt: number;
  waiting: { reason: string; checkpoint_id: string; expected_inputs: Record<string, string> } | null;
  gate: { decision: string; reasoning: string; conditions: string[] } | null;
  exit_code: number | null;
  event_count: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface StoredEntry {
  entry: {
    id: string;
    from: string;
    to: string;
    kind: string;
    status: string;
    created_at?: string;
    updated_at: string;
    payload: Json;
    refs?: Json;
  };
  version: number;
  claimed_by?: string | null;
}

/** An entry's summary (payload.summary, its first line, clipped), the title it is shown by; null without one. */
export function entrySummary(e: StoredEntry["entry"]): string | null {
  const raw = e.payload.summary;
  if (typeof raw !== "string" || raw.trim() === "") return null;
  const line = raw.trim().split("\n")[0]!;
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** An entry's title: its summary with its kind beside it, or the kind alone. */
export function entryTitle(e: StoredEntry["entry"]): HTMLElement {
  const summary = entrySummary(e);
  return summary
    ? h(
        "span",
        { class: "title" },
        h("span", { class: "summary" }, summary),
        " ",
        h("span", { class: "kind muted" }, e.kind),
      )
    : h("span", { class: "title" }, h("span", { class: "kind" }, e.kind));
}

/**
 * A form built from the WAITING event's expected_inputs (controls typed as the run expects them,
 * rows to add for arrays and maps) and a follow-up message to the agent. `onResumed` is told once
 * the server accepted them.
 */
export function resumeForm(run: Run, onResumed: () => void): HTMLElement {
  const expected = run.waiting!.expected_inputs;
  const error = h("p", { class: "error", role: "alert", "data-resume-error": run.id });
  const controls = Object.entries(expected).map(([name, type]) => ({
    name,
    control: inputControl(name, type, `resume-${run.id}-${name}`),
  }));
  const fields = controls.map(({ name, control }) =>
    h(
      "div",
      { class: "field" },
      h("label", { for: `resume-${run.id}-${name}` }, `${name} `, h("small", {}, expected[name]!)),
      control.element,
    ),
  );
  const messageId = `resume-${run.id}-message`;
  const message = h("textarea", {
    id: messageId,
    name: "message",
    "data-follow-up": "",
    rows: "3",
    placeholder: "a follow-up message to the agent (optional): it is resumed into the same session",
  }) as HTMLTextAreaElement;
  const form = h(
    "form",
    { class: "resume", "data-resume": run.id, "aria-label": `resume run ${run.id}` },
    h(
      "p",
      {},
      "waiting: ",
      h("strong", {}, run.waiting!.reason),
      " · checkpoint ",
      h("code", {}, run.waiting!.checkpoint_id),
    ),
    ...fields,
    h("div", { class: "field" }, h("label", { for: messageId }, "message ", h("small", {}, "to the agent")), message),
    h("button", { type: "submit" }, "Resume run"),
    error,
  ) as HTMLFormElement;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const inputs: Json = {};
    try {
      for (const { name, control } of controls) inputs[name] = control.read(name);
    } catch (err) {
      if (!(err instanceof InputInvalid)) throw err;
      error.textContent = err.message;
      return;
    }
    error.textContent = "";
    api("POST", `/v1/runs/${encodeURIComponent(run.id)}/resume`, {
      inputs,
      ...(message.value === "" ? {} : { message: message.value }),
    })
      .then(onResumed)
      .catch((err: Error) => (error.textContent = err.message));
  });
  return form;
}

export interface Filter {
  name: string;
  label: string;
  options: string[];
}

/** A bar of <select> filters; `onChange` gets the chosen values (empty = any). */
export function filterBar(filters: Filter[], onChange: (values: Record<string, string>) => void): HTMLElement {
  const values: Record<string, string> = {};
  const bar = h("form", { class: "filters", role: "search" });
  bar.addEventListener("submit", (e) => e.preventDefault());
  for (const f of filters) {
    const id = `filter-${f.name}`;
    const select = h(
      "select",
      { id, name: f.name },
      h("option", { value: "" }, "any"),
      ...f.options.map((o) => h("option", { value: o }, o)),
    ) as HTMLSelectElement;
    select.addEventListener("change", () => {
      values[f.name] = select.value;
      onChange({ ...values });
    });
    bar.append(h("label", { for: id }, `${f.label} `), select);
  }
  return bar;
}

/**
 * A table fed page by page (newest first) through fetchList, with a "Load more" button while the
 * API says there is a next page. `keep` filters rows client-side (for filters the API lacks).
 */
export function pagedTable<T>(o: {
  path: string;
  head: string[];
  row: (r: T) => HTMLElement;
  params?: Record<string, string | undefined>;
  keep?: (r: T) => boolean;
  limit?: number;
  empty: string;
  id: string;
}): HTMLElement {
  const body = h("tbody", {});
  const table = h(
    "table",
    { class: "list", id: o.id },
    h("thead", {}, h("tr", {}, ...o.head.map((c) => h("th", { scope: "col" }, c)))),
    body,
  );
  const note = h("p", { class: "muted", role: "status" });
  const more = h("button", { type: "button", class: "more", hidden: "" }, "Load more") as HTMLButtonElement;
  let cursor: string | null = null;
  let shown = 0;
  const load = async () => {
    more.disabled = true;
    try {
      const req: ListRequest = { params: o.params, limit: o.limit ?? 50, cursor };
      const page = await fetchList<T>(o.path, req);
      const rows = o.keep ? page.items.filter(o.keep) : page.items;
      body.append(...rows.map(o.row));
      shown += rows.length;
      cursor = page.next;
      more.hidden = cursor === null;
      note.textContent = shown === 0 && cursor === null ? o.empty : `${shown} shown${cursor ? "" : " (all)"}`;
    } catch (err) {
      note.textContent = errorText(err);
      note.className = "error";
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener("click", () => void load());
  void load();
  return h("div", { class: "paged" }, table, note, more);
}
