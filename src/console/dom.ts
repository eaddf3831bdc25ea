/// <reference lib="dom" />
/**
 * DOM and API helpers of the console. Text only ever goes in through text nodes (`h`), so entry
 * payloads, logs, diffs and digests cannot inject markup.
 */

export type Json = Record<string, unknown>;
export type Child = Node | string | null | undefined | false;

export function h(tag: string, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) el.append(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await res.text();
  const data = (text === "" ? {} : JSON.parse(text)) as { error?: { code: string; message: string } };
  if (!res.ok) throw new ApiError(res.status, data.error?.code ?? "error", data.error?.message ?? res.statusText);
  return data as T;
}

/** A button that runs `action` on click (Enter and Space included, as for every <button>), disabled while it runs. */
export function button(
  label: string,
  action: () => Promise<unknown> | void,
  attrs: Record<string, string> = {},
): HTMLButtonElement {
  const b = h("button", { type: "button", ...attrs }, label) as HTMLButtonElement;
  b.addEventListener("click", () => {
    b.disabled = true;
    void Promise.resolve()
      .then(action)
      .finally(() => (b.disabled = false));
  });
  return b;
}

/** An ISO time as `2026-01-15 10:30:00Z` (UTC, to the second), in a <time> element. */
export function time(iso: string | null | undefined): HTMLElement {
  if (!iso) return h("span", { class: "muted" }, "—");
  const d = new Date(iso);
  const text = Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace("T", " ")}Z`;
  return h("time", { datetime: iso }, text);
}

/** A value as indented JSON, folded under `label` (open when `open`). */
export function jsonDetails(label: string, value: unknown, open = false): HTMLElement {
  const d = h("details", { class: "json" }, h("summary", {}, label), h("pre", {}, JSON.stringify(value, null, 2)));
  if (open) d.setAttribute("open", "");
  return d;
}

export function badge(text: string, tone = ""): HTMLElement {
  return h("span", { class: `badge ${tone}`.trim() }, text);
}

const TONES: Record<string, string> = {
  succeeded: "green",
  done: "green",
  accepted: "green",
  running: "blue",
  in_progress: "blue",
  starting: "blue",
  waiting: "amber",
  open: "",
  pending: "amber",
  failed: "red",
  error: "red",
  rejected: "red",
  canceled: "grey",
  merged: "green",
  closed: "grey",
  applied: "green",
  undone: "grey",
};
export const stateBadge = (state: string): HTMLElement => badge(state, TONES[state] ?? "");

export const main = (): HTMLElement => document.getElementById("main")!;

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
