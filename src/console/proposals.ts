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
  /** What accepting it runs, where and how, or why it is refused (pending ones). */
  plan?: Plan | null;
}

export interface Plan {
  refused: string | null;
  isolation: string | null;
  steps: Array<{ when: string | null; command: string | null; what: string }>;
}

/** The plan under a pending proposal: the exact commands and how they run, or the refusal. */
function planBlock(plan: Plan): HTMLElement {
  if (plan.refused) return h("p", { class: "error plan" }, plan.refused);
  if (plan.steps.length === 0) return h("p", { class: "muted plan" }, "Accepting runs nothing (later runs get its variables).");
  return h(
    "div",
    { class: "plan" },
    h("p", {}, `Accepting runs ${plan.isolation ?? ""}:`),
    h("ul", {}, ...plan.steps.map((s) => h("li", {}, s.when ? `${s.when}: ` : "", s.command ? h("code", {}, s.command) : s.what))),
  );
}

export function proposalRow(p: Proposal, error: HTMLElement): HTMLElement {
  const li = h("li", { "data-proposal": p.id }, `${p.id} · ${p.role} · ${p.adjustment_type} `, h("code", {}, JSON.stringify(p.details)), ` ×${p.count} · `, h("strong", { class: stateBadge(p.status).className }, p.status), p.last_seen_at ? " · " : "", p.last_seen_at ? time(p.last_seen_at) : "");
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
