/// <reference lib="dom" />
/**
 * The pmagent web console: plain ES module, no framework, no external network. Data comes from the
 * HTTP API of `pmagent serve` (same origin); live views use EventSource. Text only ever goes in
 * through textContent, so entry payloads cannot inject markup.
 */

type Json = Record<string, unknown>;
type Child = Node | string | null | undefined | false;

const STATUSES = ["open", "in_progress", "done", "error", "canceled"];

function h(tag: string, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  const data = (await res.json()) as { error?: { code: string; message: string } };
  if (!res.ok) throw new ApiError(res.status, data.error?.code ?? "error", data.error?.message ?? res.statusText);
  return data as T;
}

const main = (): HTMLElement => document.getElementById("main")!;
let live: EventSource[] = [];

function stopLive(): void {
  for (const s of live) s.close();
  live = [];
}

function listen(url: string, handlers: Record<string, (data: Json, id: string) => void>): void {
  const source = new EventSource(url);
  for (const [event, fn] of Object.entries(handlers)) source.addEventListener(event, (e) => fn(JSON.parse((e as MessageEvent<string>).data) as Json, (e as MessageEvent).lastEventId));
  live.push(source);
}

function signIn(message: string): void {
  const input = h("input", { type: "password", name: "token", placeholder: "bearer token", autocomplete: "off" }) as HTMLInputElement;
  const error = h("p", { class: "error" });
  const form = h("form", { id: "signin" }, h("p", {}, message), input, h("button", { type: "submit" }, "Sign in"), error);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    api("POST", "/v1/session", { token: input.value })
      .then(() => route())
      .catch((err: Error) => (error.textContent = err.message));
  });
  main().replaceChildren(form);
}

// ---- board ---------------------------------------------------------------------------------

interface StoredEntry {
  entry: { id: string; from: string; to: string; kind: string; status: string; updated_at: string; payload: Json };
  version: number;
}

function boardTable(list: StoredEntry[], roles: string[]): HTMLElement {
  const actors = [...new Set([...roles, ...list.map((s) => s.entry.to)])];
  const head = h("tr", {}, h("th", {}, "role"), ...STATUSES.map((s) => h("th", {}, s)));
  const rows = actors.map((actor) =>
    h(
      "tr",
      { "data-role": actor },
      h("th", {}, actor),
      ...STATUSES.map((status) =>
        h(
          "td",
          { "data-status": status },
          ...list
            .filter((s) => s.entry.to === actor && s.entry.status === status)
            .map((s) => h("div", { class: "entry", "data-entry": s.entry.id }, s.entry.kind, h("small", {}, `${s.entry.id} · ${s.entry.from} → ${s.entry.to} · v${s.version}`))),
        ),
      ),
    ),
  );
  return h("table", { class: "board", id: "board" }, h("thead", {}, head), h("tbody", {}, ...rows));
}

async function kernelTile(): Promise<HTMLElement> {
  const tile = h("section", { class: "tile", id: "kernel" }, h("h2", {}, "Kernel health"));
  try {
    const s = await api<{ branch: string; current_phase: string; reality_green: boolean; kernel_mode: string; checks_summary: Array<{ name: string; passed: boolean }> }>("GET", "/v1/oa/snapshot");
    const passing = s.checks_summary.filter((c) => c.passed).length;
    const failing = s.checks_summary.filter((c) => !c.passed);
    tile.append(
      h("p", {}, "branch ", h("code", {}, s.branch), " · phase ", h("code", {}, s.current_phase), " · mode ", h("span", { class: `badge ${s.kernel_mode === "NORMAL" ? "green" : s.kernel_mode === "DEGRADED" ? "amber" : "red"}` }, s.kernel_mode)),
      h("p", {}, "reality ", h("span", { class: `badge ${s.reality_green ? "green" : "red"}`, id: "reality" }, s.reality_green ? "green" : "red"), ` · checks passing ${passing}/${s.checks_summary.length}`),
    );
    if (failing.length) tile.append(h("ul", { id: "failing" }, ...failing.map((c) => h("li", {}, c.name))));
  } catch (err) {
    tile.append(h("p", { class: "error" }, (err as Error).message));
  }
  return tile;
}

async function kaiTile(lane: { layer: string; name: string }, project: string): Promise<HTMLElement> {
  const tile = h("section", { class: "tile", id: "kai" }, h("h2", {}, `Kai · ${lane.layer}/${lane.name}`));
  for (const type of ["lane_status", "what_changed"]) {
    try {
      const r = await api<{ summary_md: string }>("POST", "/v1/kai", { version: "kai_request_v1", request_id: `console-${Date.now()}`, from: { actor_type: "human", actor_id: "console" }, project_id: project, type, lane: { layer: lane.layer, name: lane.name }, params: {} });
      tile.append(h("pre", { "data-kai": type }, r.summary_md));
    } catch (err) {
      tile.append(h("p", { class: "error" }, `${type}: ${(err as Error).message}`));
    }
  }
  return tile;
}

interface WhoAmI {
  actor: string;
  project_id: string;
  lanes: Array<{ layer: string; name: string; roles: string[] }>;
}

async function boardPage(who: WhoAmI): Promise<void> {
  const roles = who.lanes.flatMap((l) => l.roles);
  const holder = h("div", {}, boardTable([], roles));
  const tiles = h("div", { class: "tiles" });
  main().replaceChildren(h("h1", {}, `Lane board · ${who.project_id}`), tiles, holder);
  listen("/v1/entries/stream", { entries: (data) => holder.replaceChildren(boardTable(data as unknown as StoredEntry[], roles)) });
  tiles.append(await kernelTile());
  if (who.lanes[0]) tiles.append(await kaiTile(who.lanes[0], who.project_id));
}

// ---- runs ----------------------------------------------------------------------------------

interface Run {
  id: string;
  role: string;
  state: string;
  entry_id: string | null;
  reason: string | null;
  waiting: { reason: string; checkpoint_id: string; expected_inputs: Record<string, string> } | null;
}

async function runsPage(): Promise<void> {
  // The newest page of runs (the API pages by cursor), shown oldest first as before.
  const runs = (await api<{ items: Run[] }>("GET", "/v1/runs?order=newest&limit=500")).items.reverse();
  main().replaceChildren(
    h("h1", {}, "Runs"),
    runs.length ? h("ul", {}, ...runs.map((r) => h("li", {}, h("a", { href: `#/runs/${encodeURIComponent(r.id)}` }, r.id), ` ${r.state} · ${r.role}${r.entry_id ? ` · ${r.entry_id}` : ""}`))) : h("p", {}, "no runs"),
  );
}

function inputField(name: string, type: string): HTMLElement {
  if (type === "boolean") return h("input", { type: "checkbox", name, "data-type": type });
  if (type === "integer") return h("input", { type: "number", step: "1", name, "data-type": type, required: "" });
  if (type === "string") return h("input", { type: "text", name, "data-type": type, required: "" });
  return h("textarea", { name, "data-type": type, placeholder: `${type} as JSON`, required: "" });
}

/**
 * A form built from the WAITING event's expected_inputs; values typed as the run expects them.
 * `onResumed` is told once the server accepted the inputs.
 */
function resumeForm(run: Run, onResumed: () => void): HTMLElement {
  const expected = run.waiting!.expected_inputs;
  const error = h("p", { class: "error", id: "resume-error" });
  const form = h(
    "form",
    { class: "resume", id: "resume" },
    h("h2", {}, "Resume"),
    h("p", {}, `waiting: ${run.waiting!.reason}`),
    ...Object.entries(expected).map(([name, type]) => h("label", {}, `${name} (${type}) `, inputField(name, type))),
    h("button", { type: "submit" }, "Resume run"),
    error,
  ) as HTMLFormElement;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const inputs: Json = {};
    try {
      for (const el of Array.from(form.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>("[data-type]"))) {
        const type = el.dataset.type!;
        inputs[el.name] = type === "boolean" ? (el as HTMLInputElement).checked : type === "integer" ? Number(el.value) : type === "string" ? el.value : (JSON.parse(el.value) as unknown);
      }
    } catch (err) {
      error.textContent = `not valid JSON: ${(err as Error).message}`;
      return;
    }
    api("POST", `/v1/runs/${encodeURIComponent(run.id)}/resume`, { inputs })
      .then(onResumed)
      .catch((err: Error) => (error.textContent = err.message));
  });
  return form;
}

async function runPage(id: string): Promise<void> {
  const path = `/v1/runs/${encodeURIComponent(id)}`;
  const run = await api<Run>("GET", path);
  const state = h("span", { class: "badge", id: "run-state" }, run.state);
  const timeline = h("ol", { class: "timeline", id: "timeline" });
  const artifacts = h("ul", { id: "artifacts" });
  const logs = h("pre", { id: "logs" });
  // The run's live state may leave `waiting` before the resume request returns: the notice lives in
  // the holder (not the form) and stays until the run waits again.
  const formHolder = h("div", {});
  let resumed = false;
  const showForm = (r: Run) => {
    if (r.state === "waiting" && r.waiting) {
      resumed = false;
      formHolder.replaceChildren(
        resumeForm(r, () => {
          resumed = true;
          formHolder.replaceChildren(h("p", { id: "resumed" }, "resumed"));
        }),
      );
    } else if (!resumed) formHolder.replaceChildren();
  };
  showForm(run);
  main().replaceChildren(
    h("h1", {}, `Run ${run.id}`),
    h("p", {}, `${run.role}${run.entry_id ? ` · entry ${run.entry_id}` : ""} · `, state),
    formHolder,
    h("div", { class: "tiles" }, h("section", { class: "tile" }, h("h2", {}, "Events"), timeline), h("section", { class: "tile" }, h("h2", {}, "Artifacts"), artifacts)),
    h("section", { class: "tile" }, h("h2", {}, "Logs"), logs),
  );
  const refreshLogs = async () => {
    const lines = await api<Array<{ stream: string; text: string }>>("GET", `${path}/logs`);
    logs.textContent = lines.map((l) => (l.stream === "stdout" ? l.text : `[${l.stream}] ${l.text}`)).join("\n");
  };
  let shown = run.state;
  listen(`${path}/events/stream`, {
    lattice_event: (e) => {
      const event = e.event as { event_type: string; timestamp?: string; payload: Json };
      const p = event.payload;
      const what = String(p.message ?? p.phase ?? p.action ?? p.kind ?? p.reason ?? p.status ?? "");
      timeline.append(h("li", { "data-seq": String(e.seq) }, `${event.event_type} ${what}`));
      if (event.event_type === "ARTIFACT") artifacts.append(h("li", {}, `${String(p.kind)} ${String(p.ref ?? p.url ?? "")}`));
    },
    run: (r) => {
      const next = r as unknown as Run;
      state.textContent = next.state;
      if (next.state !== shown) {
        shown = next.state;
        showForm(next);
        void refreshLogs();
      }
    },
    end: () => void refreshLogs(),
  });
  await refreshLogs();
}

// ---- environment proposals -----------------------------------------------------------------

interface Proposal {
  id: string;
  role: string;
  status: string;
  adjustment_type: string;
  details: Json;
  count: number;
}

async function proposalsPage(): Promise<void> {
  const list = (await api<{ items: Proposal[] }>("GET", "/v1/env/proposals?limit=500")).items;
  const error = h("p", { class: "error" });
  const row = (p: Proposal): HTMLElement => {
    const li = h("li", { "data-proposal": p.id }, `${p.id} · ${p.role} · ${p.adjustment_type} ${JSON.stringify(p.details)} ×${p.count} · `, h("strong", {}, p.status));
    if (p.status === "pending") {
      for (const verb of ["accept", "reject"]) {
        const b = h("button", { type: "button" }, verb);
        b.addEventListener("click", () => {
          api<Proposal>("POST", `/v1/env/proposals/${encodeURIComponent(p.id)}/${verb}`)
            .then((d) => li.replaceWith(row(d)))
            .catch((err: Error) => (error.textContent = err.message));
        });
        li.append(" ", b);
      }
    }
    return li;
  };
  main().replaceChildren(h("h1", {}, "Environment proposals"), error, list.length ? h("ul", {}, ...list.map(row)) : h("p", {}, "no environment proposals"));
}

// ---- routing -------------------------------------------------------------------------------

async function route(): Promise<void> {
  stopLive();
  try {
    const who = await api<WhoAmI>("GET", "/v1/whoami");
    document.getElementById("who")!.textContent = `as ${who.actor}`;
    const hash = location.hash.replace(/^#/, "") || "/";
    const run = /^\/runs\/(.+)$/.exec(hash);
    if (run) await runPage(decodeURIComponent(run[1]!));
    else if (hash === "/runs") await runsPage();
    else if (hash === "/proposals") await proposalsPage();
    else await boardPage(who);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) signIn(err.message);
    else main().replaceChildren(h("p", { class: "error" }, (err as Error).message));
  }
}

window.addEventListener("hashchange", () => void route());
void route();
