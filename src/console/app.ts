/// <reference lib="dom" />
/**
 * The pmagent web console: plain ES modules, no framework, no external network. Data comes from the
 * HTTP API of `pmagent serve` (same origin); live views use EventSource and close when a run ends.
 * Pages: board (#/), inbox, entries and one entry, runs and one run, workers, pull requests, proposals.
 */
import { api, ApiError, errorText, h, main } from "./dom.js";
import { boardPage, type WhoAmI } from "./board.js";
import { entriesPage, entryPage } from "./entries.js";
import { inboxPage } from "./inbox.js";
import { stopLive } from "./live.js";
import { prPage, prsPage } from "./prs.js";
import { proposalsPage } from "./proposals.js";
import { runPage, runsPage } from "./runs.js";
import { workersPage } from "./workers.js";

function signIn(message: string): void {
  const input = h("input", {
    type: "password",
    id: "token",
    name: "token",
    placeholder: "bearer token",
    autocomplete: "off",
  }) as HTMLInputElement;
  const error = h("p", { class: "error", role: "alert" });
  const form = h(
    "form",
    { id: "signin" },
    h("p", {}, message),
    h("label", { for: "token" }, "Token "),
    input,
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    api("POST", "/v1/session", { token: input.value })
      .then(() => route())
      .catch((err: Error) => (error.textContent = err.message));
  });
  main().replaceChildren(form);
  input.focus();
}

/** The nav's inbox count: how many things wait for a person. */
async function inboxCount(): Promise<void> {
  const badge = document.getElementById("inbox-count");
  if (!badge) return;
  try {
    const i = await api<Record<string, unknown[]>>("GET", "/v1/inbox?limit=200");
    const n = Object.values(i).reduce((sum, list) => sum + (Array.isArray(list) ? list.length : 0), 0);
    badge.textContent = n ? String(n) : "";
    badge.setAttribute("aria-label", `${n} waiting`);
  } catch {
    badge.textContent = "";
  }
}

function markNav(hash: string): void {
  for (const a of Array.from(document.querySelectorAll<HTMLAnchorElement>("header nav a"))) {
    const target = a.getAttribute("href")!.slice(1);
    const current = target === "/" ? hash === "/" : hash === target || hash.startsWith(`${target}/`);
    if (current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

async function route(): Promise<void> {
  stopLive();
  try {
    const who = await api<WhoAmI>("GET", "/v1/whoami");
    document.getElementById("who")!.textContent = `as ${who.actor}`;
    // Without tokens (loopback) everyone is the first human: there is nothing to sign out of.
    document.getElementById("signout")!.hidden = !who.auth_required;
    const hash = location.hash.replace(/^#/, "") || "/";
    markNav(hash);
    void inboxCount();
    const again = () => void route();
    const m = (re: RegExp) => re.exec(hash)?.[1];
    const runId = m(/^\/runs\/(.+)$/);
    const entryId = m(/^\/entries\/(.+)$/);
    const pr = m(/^\/prs\/(\d+)$/);
    if (runId) await runPage(decodeURIComponent(runId));
    else if (entryId) await entryPage(decodeURIComponent(entryId), again);
    else if (pr) await prPage(Number(pr));
    else if (hash === "/inbox") await inboxPage(again);
    else if (hash === "/runs") runsPage(who);
    else if (hash === "/entries") entriesPage(who);
    else if (hash === "/prs") prsPage();
    else if (hash === "/proposals") await proposalsPage();
    else if (hash === "/workers") await workersPage(who);
    else await boardPage(who);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) signIn(err.message);
    else main().replaceChildren(h("p", { class: "error", role: "alert" }, errorText(err)));
  }
}

document.getElementById("signout")!.addEventListener("click", () => {
  void api("DELETE", "/v1/session")
    .catch(() => undefined)
    .then(() => {
      document.getElementById("who")!.textContent = "";
      document.getElementById("signout")!.hidden = true;
      return route();
    });
});

window.addEventListener("hashchange", () => void route());
void route();
