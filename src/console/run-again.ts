/// <reference lib="dom" />
/** A finished run's "Retry" and "Run again with another agent" (POST /v1/runs/{id}/retry): the new run opens when recorded. */
import { api, button, errorText, h } from "./dom.js";
import type { Run } from "./widgets.js";
import { agentLabel, type Agent } from "./workers.js";

export function runAgainControls(run: Run, error: HTMLElement): HTMLElement {
  const path = `/v1/runs/${encodeURIComponent(run.id)}/retry`;
  const go = (body: Record<string, string>) =>
    api<{ run: { id: string } }>("POST", path, body)
      .then((r) => (location.hash = `#/runs/${encodeURIComponent(r.run.id)}`))
      .catch((err: unknown) => (error.textContent = errorText(err)));
  const agent = h("select", { id: "run-again-agent", "aria-label": "another agent" }) as HTMLSelectElement;
  const other = button("Run again with this agent", () => (agent.value ? go({ agent: agent.value }) : undefined), {
    id: "run-again",
  });
  const holder = h(
    "span",
    { class: "run-again" },
    button("Retry", () => go({}), { id: "retry-run" }),
  );
  void api<{ items: Agent[] }>("GET", "/v1/agents").then(({ items }) => {
    if (items.length === 0) return;
    agent.replaceChildren(...items.map((a) => h("option", { value: a.name }, agentLabel(a))));
    holder.append(" ", agent, " ", other);
  });
  return holder;
}
