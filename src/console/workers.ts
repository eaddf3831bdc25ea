/// <reference lib="dom" />
/**
 * The Workers page: start a worker in the server for a role (how many runs at once, which agent),
 * see what each one runs and has run, stop it. The list follows the board's live stream: a worker
 * claiming or finishing an entry changes the board, and the list is read again then.
 */
import { api, button, errorText, h, main, stateBadge, time } from "./dom.js";
import type { WhoAmI } from "./board.js";
import { listen } from "./live.js";

export interface Agent {
  name: string;
  role: string;
  model: string | null;
}

interface HostedWorker {
  id: string;
  role: string;
  concurrency: number;
  agent: string | null;
  state: string;
  started_by: string;
  started_at: string;
  error: string | null;
  current: Array<{ run_id: string; entry_id: string; since: string }>;
  finished: Record<string, number>;
}

/** "codex (gpt-5, as Coder runs it)" */
export const agentLabel = (a: Agent): string => `${a.name} (${a.model ? `${a.model}, ` : ""}as ${a.role} runs it)`;

function workerRow(w: HostedWorker, onStop: () => Promise<unknown>): HTMLElement {
  const done =
    Object.entries(w.finished)
      .map(([state, n]) => `${n} ${state}`)
      .join(", ") || "none yet";
  const running = w.current.length
    ? h(
        "ul",
        {},
        ...w.current.map((c) =>
          h(
            "li",
            {},
            h("a", { href: `#/runs/${encodeURIComponent(c.run_id)}` }, c.run_id),
            ` on ${c.entry_id} since `,
            time(c.since),
          ),
        ),
      )
    : h("span", { class: "muted" }, w.state === "running" ? "waiting for open entries" : "—");
  return h(
    "tr",
    { "data-worker": w.id },
    h("td", {}, w.id),
    h("td", {}, w.role),
    h("td", {}, w.agent ?? "role's runner"),
    h("td", {}, String(w.concurrency)),
    h("td", {}, stateBadge(w.state), w.error ? h("span", { class: "error" }, ` ${w.error}`) : null),
    h("td", { class: "current" }, running),
    h("td", {}, done),
    h(
      "td",
      {},
      w.state === "running"
        ? button("Stop", onStop, { class: "stop-worker", "aria-label": `Stop worker ${w.id}` })
        : null,
    ),
  );
}

export async function workersPage(who: WhoAmI): Promise<void> {
  const error = h("p", { class: "error", role: "alert", id: "workers-error" });
  const roles = who.lanes.flatMap((l) => l.roles);
  const { items: agents } = await api<{ items: Agent[] }>("GET", "/v1/agents");
  const role = h(
    "select",
    { id: "worker-role", name: "role" },
    ...roles.map((r) => h("option", { value: r }, r)),
  ) as HTMLSelectElement;
  const concurrency = h("input", {
    id: "worker-concurrency",
    name: "concurrency",
    type: "number",
    min: "1",
    max: "64",
    value: "1",
    required: "",
  }) as HTMLInputElement;
  const agent = h(
    "select",
    { id: "worker-agent", name: "agent" },
    h("option", { value: "" }, "the role's own runner"),
    ...agents.map((a) => h("option", { value: a.name }, agentLabel(a))),
  ) as HTMLSelectElement;
  const body = h("tbody", { id: "workers" });
  const status = h("span", { class: "live", role: "status" });

  const refresh = async () => {
    try {
      const { items } = await api<{ items: HostedWorker[] }>("GET", "/v1/workers");
      body.replaceChildren(
        ...(items.length
          ? items.map((w) =>
              workerRow(w, () =>
                api("DELETE", `/v1/workers/${encodeURIComponent(w.id)}`)
                  .then(refresh)
                  .catch((err: unknown) => (error.textContent = errorText(err))),
              ),
            )
          : [h("tr", {}, h("td", { colspan: "8", class: "muted" }, "no workers in this server: start one above"))]),
      );
    } catch (err) {
      error.textContent = errorText(err);
    }
  };

  const form = h(
    "form",
    { id: "start-worker", class: "inline-form" },
    h("label", { for: "worker-role" }, "Role "),
    role,
    h("label", { for: "worker-concurrency" }, " Runs at once "),
    concurrency,
    h("label", { for: "worker-agent" }, " Agent "),
    agent,
    h("button", { type: "submit" }, "Start worker"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    error.textContent = "";
    const request = {
      role: role.value,
      concurrency: Number(concurrency.value),
      ...(agent.value ? { agent: agent.value } : {}),
    };
    void api("POST", "/v1/workers", request)
      .then(refresh)
      .catch((err: unknown) => (error.textContent = errorText(err)));
  });

  main().replaceChildren(
    h("h1", {}, "Workers ", status),
    h(
      "p",
      { class: "muted" },
      "Workers run in this pmagent serve: each claims its role's open entries and runs them; stopping one (or the server) stops its runs under way and leaves their entries for another worker.",
    ),
    form,
    error,
    h(
      "table",
      { class: "list" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Worker", "Role", "Agent", "At once", "State", "Running", "Finished", ""].map((t) => h("th", {}, t)),
        ),
      ),
      body,
    ),
  );
  await refresh();
  // Claims and finished runs change the board: read the workers again then.
  listen("/v1/entries/stream", { entries: () => void refresh(), changes: () => void refresh() }, status);
}
