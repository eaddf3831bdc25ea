/// <reference lib="dom" />
/** Environment proposals: list (newest first), what accepting a pending one runs, and its accept/reject buttons. */
import { api, button, h, main, stateBadge, time, type Json } from "./dom.js";
import { fetchList } from "./list.js";

export interface Proposal {
  id: string;
  role: string;
  status: string;
  adjustment_type: string;
  details: Json;
  count: number;
  last_seen_at?: string;
  /** The sprite's own confidence (0–1) and what it saw. */
  confidence?: number;
  evidence?: string[];
  observed_failure?: { phase: string; exit_code: number; stderr_hint: string };
  first_run_id?: string;
  last_run_id?: string;
  decided_by?: string | null;
  /** What accepting it runs, where and how, or why it is refused (pending ones). */
  plan?: Plan | null;
  /** The change accepting it made (accepted ones). */
  change?: Change | null;
}

export interface Change {
  id: string;
  status: string;
  reason: string | null;
  undone_by?: string | null;
}

export interface Plan {
  refused: string | null;
  isolation: string | null;
  steps: Array<{ when: string | null; command: string | null; what: string }>;
}

/** The plan under a pending proposal: the exact commands and how they run, or the refusal. */
function planBlock(plan: Plan): HTMLElement {
  if (plan.refused) return h("p", { class: "error plan" }, plan.refused);
  if (plan.steps.length === 0)
    return h("p", { class: "muted plan" }, "Accepting runs nothing (later runs get its variables).");
  return h(
    "div",
    { class: "plan" },
    h("p", {}, `Accepting runs ${plan.isolation ?? ""}:`),
    h(
      "ul",
      {},
      ...plan.steps.map((s) => h("li", {}, s.when ? `${s.when}: ` : "", s.command ? h("code", {}, s.command) : s.what)),
    ),
  );
}

/** Why a sprite proposed it: the failure it saw, its confidence, its evidence and the runs. */
function evidenceBlock(p: Proposal): HTMLElement {
  const f = p.observed_failure;
  const runs = [...new Set([p.first_run_id, p.last_run_id].filter((r): r is string => Boolean(r)))];
  return h(
    "details",
    { class: "evidence" },
    h("summary", {}, "evidence", p.confidence === undefined ? "" : ` · confidence ${Math.round(p.confidence * 100)} %`),
    f ? h("p", {}, `Failed in ${f.phase} with exit code ${f.exit_code}: `, h("code", {}, f.stderr_hint)) : "",
    p.evidence?.length ? h("ul", {}, ...p.evidence.map((e) => h("li", {}, h("code", {}, e)))) : "",
    runs.length
      ? h(
          "p",
          {},
          "Seen in ",
          ...runs.flatMap((r, i) => [i ? ", " : "", h("a", { href: `#/runs/${encodeURIComponent(r)}` }, r)]),
        )
      : "",
  );
}

/** The applied change of an accepted proposal, and Undo while it is applied. */
function changeLine(p: Proposal, change: Change, error: HTMLElement): HTMLElement {
  const line = h(
    "p",
    { class: "change", "data-change": change.id },
    `change ${change.id}: `,
    h("strong", { class: stateBadge(change.status).className }, change.status),
    change.reason ? ` (${change.reason})` : "",
  );
  if (change.status === "applied")
    line.append(
      " ",
      button("undo", () =>
        api<Change>("POST", `/v1/env/changes/${encodeURIComponent(change.id)}/undo`)
          .then((undone) => line.replaceWith(changeLine(p, undone, error)))
          .catch((err: Error) => (error.textContent = err.message)),
      ),
    );
  return line;
}

export function proposalRow(p: Proposal, error: HTMLElement): HTMLElement {
  const li = h(
    "li",
    { "data-proposal": p.id },
    `${p.id} · ${p.role} · ${p.adjustment_type} `,
    h("code", {}, JSON.stringify(p.details)),
    ` ×${p.count} · `,
    h("strong", { class: stateBadge(p.status).className }, p.status),
    p.decided_by ? ` by ${p.decided_by}` : "",
    p.last_seen_at ? " · " : "",
    p.last_seen_at ? time(p.last_seen_at) : "",
  );
  if (p.status === "pending") {
    const refused = Boolean(p.plan?.refused);
    // A refused proposal can only be rejected.
    for (const verb of refused ? ["reject"] : ["accept", "reject"]) {
      li.append(
        " ",
        button(verb, () =>
          api<Proposal>("POST", `/v1/env/proposals/${encodeURIComponent(p.id)}/${verb}`)
            .then((d) => li.replaceWith(proposalRow(d, error)))
            .catch((err: Error) => (error.textContent = err.message)),
        ),
      );
    }
    if (p.plan) li.append(planBlock(p.plan));
  }
  if (p.change) li.append(changeLine(p, p.change, error));
  li.append(evidenceBlock(p));
  return li;
}

export async function proposalsPage(): Promise<void> {
  const error = h("p", { class: "error", role: "alert" });
  const list = h("ul", { class: "plain", id: "proposals" });
  const more = h("button", { type: "button", class: "more", hidden: "" }, "Load more") as HTMLButtonElement;
  let cursor: string | null = null;
  const load = async () => {
    const page = await fetchList<Proposal>("/v1/env/proposals", { limit: 50, cursor });
    list.append(...page.items.map((p) => proposalRow(p, error)));
    cursor = page.next;
    more.hidden = cursor === null;
    if (!list.children.length) list.replaceWith(h("p", {}, "no environment proposals"));
  };
  more.addEventListener("click", () => void load().catch((err: Error) => (error.textContent = err.message)));
  main().replaceChildren(h("h1", {}, "Environment proposals"), error, list, more);
  await load();
}
