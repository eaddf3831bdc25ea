/// <reference lib="dom" />
/** Runs: the list (newest first, filtered) and one run's view with its live timeline. */
import { api, button, errorText, h, jsonDetails, main, stateBadge, time, type Json } from "./dom.js";
import type { WhoAmI } from "./board.js";
import { conversationView } from "./conversation.js";
import { pullNumbers } from "./entries.js";
import type { Page } from "./list.js";
import { listen } from "./live.js";
import { pullWithDiff } from "./prs.js";
import { runAgainControls } from "./run-again.js";
import { filterBar, pagedTable, resumeForm, type Run } from "./widgets.js";

const RUN_STATES = ["starting", "running", "waiting", "succeeded", "failed", "canceled"];
const TERMINAL = ["succeeded", "failed", "canceled"];

export function runsPage(who: WhoAmI): void {
  const roles = who.lanes.flatMap((l) => l.roles);
  const holder = h("div", {});
  const show = (f: Record<string, string>) =>
    holder.replaceChildren(
      pagedTable<Run>({
        id: "runs",
        path: "/v1/runs",
        params: { state: f.state, role: f.role },
        keep: (r) => (!f.state || r.state === f.state) && (!f.role || r.role === f.role),
        head: ["run", "state", "role", "entry", "started", "updated", "events"],
        empty: "no runs match",
        row: (r) =>
          h(
            "tr",
            { "data-run-row": r.id },
            h("td", {}, h("a", { href: `#/runs/${encodeURIComponent(r.id)}` }, r.id)),
            h("td", {}, stateBadge(r.state)),
            h("td", {}, r.role),
            h("td", {}, r.entry_id ? h("a", { href: `#/entries/${encodeURIComponent(r.entry_id)}` }, r.entry_id) : "—"),
            h("td", {}, time(r.created_at)),
            h("td", {}, time(r.updated_at)),
            h("td", {}, String(r.event_count)),
          ),
      }),
    );
  main().replaceChildren(
    h("h1", {}, "Runs"),
    filterBar(
      [
        { name: "state", label: "state", options: RUN_STATES },
        { name: "role", label: "role", options: roles },
      ],
      show,
    ),
    holder,
  );
  show({});
}

interface StoredEvent {
  seq: number;
  id: string;
  event_type: string;
  event: { event_type: string; timestamp?: string; payload: Json };
  received_at: string;
  dispatched_at: string | null;
  dispatch: Json | null;
}

interface ActionRecord {
  event_hash: string;
  action: string;
  state: string;
  attempts: number;
  result: Json | null;
  error: { code: string; message: string } | null;
  updated_at: string;
}

/** The one-line gist of an event's payload. */
function gist(type: string, p: Json): string {
  if (type === "ACTION_REQUEST") return `${String(p.action)}${p.blocking ? " (blocking)" : ""}`;
  if (type === "ARTIFACT") return `${String(p.kind)} ${String(p.ref ?? p.url ?? "")}`.trim();
  if (type === "WAITING") return String(p.reason ?? "");
  if (type === "ENVIRONMENT_PROPOSAL") return String((p.suggested_adjustment as Json | undefined)?.type ?? "");
  if (type === "COMPLETED") return `${String(p.status ?? "")}${p.summary ? `: ${String(p.summary)}` : ""}`;
  return String(p.message ?? p.phase ?? p.reason ?? p.status ?? "");
}

function outcomeOf(a: ActionRecord): HTMLElement {
  const r = a.result;
  const pr =
    r && typeof r.number === "number"
      ? `PR #${r.number}${typeof r.head === "string" ? ` ${r.head} → ${String(r.base)}` : ""}`
      : null;
  const detail = a.error ? `${a.error.code}: ${a.error.message}` : (pr ?? (r ? JSON.stringify(r) : ""));
  return h(
    "span",
    { class: "outcome", "data-action-state": a.state },
    "→ ",
    stateBadge(a.state),
    detail ? ` ${detail}` : "",
  );
}

/** A run's usage as the API gives it (GET /v1/runs/:id `usage`). */
interface RunUsage {
  total_tokens: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost: number | null;
  unpriced: string[];
  models: Array<{ model: string; total_tokens: number; cost: number | null }>;
}

const int = (n: number) => n.toLocaleString("en-US");
const money = (c: number) => (c < 1 ? c.toFixed(4) : c.toFixed(2));

/** The same words as `pmagent runs show`: tokens in and out, then the cost (or why it is unknown), then each model when several. */
function usageText(u: RunUsage | undefined): string {
  if (!u || u.total_tokens === 0) return "no usage reported";
  const input = `${int(u.input_tokens)} in${u.cached_input_tokens ? `, ${int(u.cached_input_tokens)} cached` : ""}`;
  const output = `${int(u.output_tokens)} out${u.reasoning_tokens ? `, ${int(u.reasoning_tokens)} reasoning` : ""}`;
  const cost =
    u.cost !== null
      ? `, cost ${money(u.cost)}`
      : u.unpriced.length
        ? `, cost unknown (no price for ${u.unpriced.join(", ")})`
        : "";
  const models =
    u.models.length > 1
      ? ` — ${u.models.map((m) => `${m.model || "(model not reported)"}: ${int(m.total_tokens)}${m.cost !== null ? ` (${money(m.cost)})` : ""}`).join("; ")}`
      : "";
  return `${int(u.total_tokens)} tokens (${input}; ${output})${cost}${models}`;
}

export async function runPage(id: string): Promise<void> {
  const path = `/v1/runs/${encodeURIComponent(id)}`;
  const run = await api<
    Run & {
      usage?: RunUsage;
      protocol_errors: Array<{ reason: string; at: string }>;
      violations: Array<{ rule: string; detail: string; at: string }>;
    }
  >("GET", path);
  const state = h("span", { id: "run-state", class: "badge" }, run.state);
  const setState = (s: string) => {
    state.textContent = s;
    state.className = stateBadge(s).className;
  };
  setState(run.state);
  const live = h("span", { class: "live", id: "run-live", role: "status" });
  const timeline = h("ol", { class: "timeline", id: "timeline", "aria-live": "polite" });
  const conversation = conversationView();
  const artifacts = h("ul", { id: "artifacts" });
  const shownArtifacts = new Set<string>();
  const checkpoints = h("ul", { id: "checkpoints" });
  const logs = h("pre", { id: "logs" });
  const prs = h("div", { id: "run-prs" });
  const usage = h("p", { id: "run-usage" }, usageText(run.usage));
  const error = h("p", { class: "error", role: "alert" });
  const actions = new Map<string, ActionRecord>();
  const outcomeSlots = new Map<string, HTMLElement>();
  const shownPrs = new Set<number>();

  const refreshActions = async () => {
    const list = await api<Page<ActionRecord>>("GET", `/v1/actions?run=${encodeURIComponent(id)}&limit=500`);
    for (const a of list.items) {
      actions.set(a.event_hash, a);
      outcomeSlots.get(a.event_hash)?.replaceChildren(outcomeOf(a));
    }
    for (const n of await pullNumbers([id])) {
      if (shownPrs.has(n)) continue;
      shownPrs.add(n);
      prs.append(await pullWithDiff(n));
    }
  };
  // Log lines come with the live stream as they are stored; a reconnect sends them again, so each
  // is shown once by its seq.
  let logSeq = 0;
  const appendLogs = (lines: Array<{ seq: number; stream: string; text: string }>) => {
    const fresh = lines.filter((l) => l.seq > logSeq);
    if (fresh.length === 0) return;
    logSeq = fresh[fresh.length - 1]!.seq;
    const text = fresh.map((l) => (l.stream === "stdout" ? l.text : `[${l.stream}] ${l.text}`)).join("\n");
    logs.append(logs.textContent ? `\n${text}` : text);
  };
  const refreshUsage = async () => {
    usage.textContent = usageText((await api<{ usage?: RunUsage }>("GET", path)).usage);
  };
  const refresh = () =>
    void Promise.all([refreshActions(), refreshUsage()]).catch((err: unknown) => (error.textContent = errorText(err)));

  // The resume notice lives in the holder (not the form) and stays until the run waits again: the
  // run's live state may leave `waiting` before the resume request returns.
  const formHolder = h("div", { id: "resume-holder" });
  let resumed = false;
  const controls = h("div", { class: "actions" });
  let controlsTerminal: boolean | undefined;
  const showControls = (r: Run) => {
    if (r.state === "waiting" && r.waiting) {
      resumed = false;
      formHolder.replaceChildren(
        h("h2", {}, "Resume"),
        resumeForm(r, () => {
          resumed = true;
          formHolder.replaceChildren(h("p", { id: "resumed", role: "status" }, "resumed"));
        }),
      );
    } else if (!resumed) formHolder.replaceChildren();
    // Rebuilt only when the run crosses into or out of a final state: a later update of the same
    // finished run must not replace the agent list a person is choosing from.
    const terminal = TERMINAL.includes(r.state);
    if (terminal === controlsTerminal) return;
    controlsTerminal = terminal;
    controls.replaceChildren(
      ...(terminal
        ? [runAgainControls(r, error)]
        : [
            button(
              "Cancel run",
              () =>
                api("POST", `${path}/cancel`, { reason: "canceled from the console" }).catch((err: unknown) => {
                  error.textContent = errorText(err);
                }),
              { id: "cancel-run" },
            ),
          ]),
    );
  };
  showControls(run);
  const meta = h("p", { class: "muted", id: "run-meta" });
  const showMeta = (r: Run) =>
    meta.replaceChildren(
      `${r.role}`,
      r.entry_id ? " · entry " : "",
      r.entry_id ? h("a", { href: `#/entries/${encodeURIComponent(r.entry_id)}` }, r.entry_id) : "",
      ` · attempt ${r.attempt} · started `,
      time(r.created_at),
      " · updated ",
      time(r.updated_at),
      r.finished_at ? " · finished " : "",
      r.finished_at ? time(r.finished_at) : "",
      r.reason ? ` · ${r.reason}` : "",
      r.gate ? ` · OA gate ${r.gate.decision}` : "",
    );
  showMeta(run);

  main().replaceChildren(
    h("h1", {}, `Run ${run.id} `, state, " ", live),
    meta,
    controls,
    error,
    formHolder,
    h(
      "div",
      { class: "cols" },
      h(
        "div",
        {},
        h(
          "section",
          { class: "tile wide", "aria-labelledby": "conversation-h" },
          h("h2", { id: "conversation-h" }, "Conversation"),
          conversation.element,
        ),
        h(
          "section",
          { class: "tile wide", "aria-labelledby": "timeline-h" },
          h("h2", { id: "timeline-h" }, "Timeline"),
          timeline,
        ),
      ),
      h(
        "div",
        {},
        h(
          "section",
          { class: "tile", "aria-labelledby": "artifacts-h" },
          h("h2", { id: "artifacts-h" }, "Artifacts"),
          artifacts,
        ),
        h(
          "section",
          { class: "tile", "aria-labelledby": "checkpoints-h" },
          h("h2", { id: "checkpoints-h" }, "Checkpoints"),
          checkpoints,
        ),
        h("section", { class: "tile", "aria-labelledby": "usage-h" }, h("h2", { id: "usage-h" }, "Usage"), usage),
        run.protocol_errors.length || run.violations.length
          ? h(
              "section",
              { class: "tile", "aria-labelledby": "problems-h" },
              h("h2", { id: "problems-h" }, "Problems"),
              h(
                "ul",
                {},
                ...run.protocol_errors.map((p) => h("li", {}, time(p.at), ` protocol: ${p.reason}`)),
                ...run.violations.map((v) => h("li", {}, time(v.at), ` ${v.rule}: ${v.detail}`)),
              ),
            )
          : "",
      ),
    ),
    prs,
    h("section", { class: "tile", "aria-labelledby": "logs-h" }, h("h2", { id: "logs-h" }, "Logs"), logs),
  );

  let shown = run.state;
  listen(
    `${path}/events/stream?logs=1`,
    {
      logs: (data) => appendLogs(data as unknown as Array<{ seq: number; stream: string; text: string }>),
      lattice_event: (data) => {
        const e = data as unknown as StoredEvent;
        const p = e.event.payload ?? {};
        const slot = h("span", { class: "slot" });
        const li = h(
          "li",
          { "data-seq": String(e.seq), "data-type": e.event_type },
          h(
            "div",
            { class: "line" },
            time(e.event.timestamp ?? e.received_at),
            " ",
            h("strong", {}, e.event_type),
            " ",
            h("span", { class: "what" }, gist(e.event_type, p)),
            " ",
            slot,
          ),
          jsonDetails("payload", p),
        );
        if (e.event_type === "ACTION_REQUEST") {
          outcomeSlots.set(e.id, slot);
          const a = actions.get(e.id);
          if (a) slot.replaceChildren(outcomeOf(a));
          else if (e.dispatch) slot.replaceChildren(h("span", { class: "outcome" }, `→ ${JSON.stringify(e.dispatch)}`));
          else slot.replaceChildren(h("span", { class: "outcome muted" }, "→ pending"));
        } else if (e.dispatch)
          slot.replaceChildren(
            h("span", { class: "outcome" }, `→ ${String(e.dispatch.status ?? JSON.stringify(e.dispatch))}`),
          );
        timeline.append(li);
        conversation.add(e);
        if (e.event_type === "ARTIFACT") {
          // A file changed again by a later attempt is the same artifact: listed once.
          const what = `${String(p.kind)} ${String(p.ref ?? p.url ?? "")}`;
          if (!shownArtifacts.has(what)) artifacts.append(h("li", {}, what));
          shownArtifacts.add(what);
        }
        if (e.event_type === "WAITING")
          checkpoints.append(
            h(
              "li",
              { "data-checkpoint": String(p.checkpoint_id) },
              h("code", {}, String(p.checkpoint_id)),
              ` · ${String(p.reason)} · `,
              time(e.event.timestamp ?? e.received_at),
            ),
          );
        if (e.event_type === "ACTION_REQUEST") refresh();
        else if (e.event_type === "INFO" && (p.kind === "token_usage" || p.kind === "usage"))
          void refreshUsage().catch(() => undefined);
      },
      run: (data) => {
        const next = data as unknown as Run;
        setState(next.state);
        showMeta(next);
        if (next.state !== shown) {
          shown = next.state;
          showControls(next);
          refresh();
        }
      },
      end: (data) => {
        setState(String(data.state));
        refresh();
      },
    },
    live,
  );
  refresh();
}
