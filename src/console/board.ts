/// <reference lib="dom" />
/** The lane board (live), with tiles: what waits for a person, kernel health and Kai's digests. */
import { api, ApiError, errorText, h, main } from "./dom.js";
import { listen } from "./live.js";
import { renderMarkdown } from "./markdown.js";
import { entrySummary, type StoredEntry } from "./widgets.js";

export const STATUSES = ["open", "in_progress", "done", "error", "canceled"];

export interface WhoAmI {
  actor: string;
  humans: string[];
  project_id: string;
  lanes: Array<{ layer: string; name: string; roles: string[]; kinds?: Record<string, string[]> }>;
  auth_required: boolean;
}

/** A card dragged onto another status of its row asks the board for that transition (its version expected). */
const DRAG_TYPE = "application/x-pmagent-entry";

function dropTarget(cell: HTMLElement, role: string, status: string, error: HTMLElement): void {
  const carried = (ev: DragEvent): { id: string; to: string; version: number; status: string } | null => {
    const raw = ev.dataTransfer?.getData(DRAG_TYPE);
    return raw ? (JSON.parse(raw) as { id: string; to: string; version: number; status: string }) : null;
  };
  // Only cards of this row may land here; dragover must be cancelled for a drop to happen.
  cell.addEventListener("dragover", (ev) => {
    if (!ev.dataTransfer?.types.includes(DRAG_TYPE)) return;
    ev.preventDefault();
    cell.classList.add("drop-target");
  });
  cell.addEventListener("dragleave", () => cell.classList.remove("drop-target"));
  cell.addEventListener("drop", (ev) => {
    ev.preventDefault();
    cell.classList.remove("drop-target");
    const card = carried(ev);
    if (!card || card.status === status) return;
    if (card.to !== role) {
      error.textContent = `${card.id} is addressed to ${card.to}: drop it in its own row (a status change does not re-address an entry)`;
      return;
    }
    error.textContent = "";
    // The live stream moves the card once the board accepts; a refusal (lifecycle, permission, a newer version) is shown.
    api("POST", `/v1/entries/${encodeURIComponent(card.id)}/status`, {
      status,
      expected_version: card.version,
      note: "moved on the board",
    }).catch((err: unknown) => (error.textContent = errorText(err)));
  });
}

function boardTable(
  list: StoredEntry[],
  roles: string[],
  kind: string,
  viewer: string,
  error: HTMLElement,
): HTMLElement {
  const shown = kind ? list.filter((s) => s.entry.kind === kind) : list;
  const actors = [...new Set([...roles, ...shown.map((s) => s.entry.to)])];
  const head = h("tr", {}, h("th", { scope: "col" }, "role"), ...STATUSES.map((s) => h("th", { scope: "col" }, s)));
  const rows = actors.map((actor) =>
    h(
      "tr",
      { "data-role": actor },
      h("th", { scope: "row" }, actor),
      ...STATUSES.map((status) => {
        const cell = h(
          "td",
          { "data-status": status },
          ...shown
            .filter((s) => s.entry.to === actor && s.entry.status === status)
            .sort((a, b) => (a.entry.updated_at < b.entry.updated_at ? 1 : -1))
            .map((s) => {
              const card = h(
                "a",
                {
                  class: "entry",
                  href: `#/entries/${encodeURIComponent(s.entry.id)}`,
                  "data-entry": s.entry.id,
                  draggable: "true",
                },
                entrySummary(s.entry) ?? s.entry.kind,
                // Open and addressed to the person looking: theirs to act on.
                s.entry.to === viewer && s.entry.status === "open"
                  ? h("span", { class: "badge amber waiting-you" }, "waiting on you")
                  : "",
                h(
                  "small",
                  {},
                  `${entrySummary(s.entry) ? `${s.entry.kind} · ` : ""}${s.entry.id} · ${s.entry.from} → ${s.entry.to} · v${s.version}`,
                ),
              );
              card.addEventListener("dragstart", (ev) => {
                ev.dataTransfer?.setData(
                  DRAG_TYPE,
                  JSON.stringify({ id: s.entry.id, to: s.entry.to, version: s.version, status: s.entry.status }),
                );
                if (ev.dataTransfer) ev.dataTransfer.effectAllowed = "move";
              });
              return card;
            }),
        );
        dropTarget(cell, actor, status, error);
        return cell;
      }),
    ),
  );
  return h(
    "table",
    { class: "board", id: "board" },
    h("caption", { class: "sr-only" }, "entries by role and status"),
    h("thead", {}, head),
    h("tbody", {}, ...rows),
  );
}

/**
 * Kernel health. A project without OA kernel surfaces (the demo, a new repository) is a normal
 * state: the tile says what that means and how to add them, calmly, instead of an error.
 */
async function kernelTile(): Promise<HTMLElement> {
  const tile = h(
    "section",
    { class: "tile", id: "kernel", "aria-labelledby": "kernel-h" },
    h("h2", { id: "kernel-h" }, "Kernel health"),
  );
  try {
    const s = await api<{
      branch: string;
      current_phase: string;
      reality_green: boolean;
      kernel_mode: string;
      checks_summary: Array<{ name: string; passed: boolean }>;
    }>("GET", "/v1/oa/snapshot");
    const passing = s.checks_summary.filter((c) => c.passed).length;
    const failing = s.checks_summary.filter((c) => !c.passed);
    tile.append(
      h(
        "p",
        {},
        "branch ",
        h("code", {}, s.branch),
        " · phase ",
        h("code", {}, s.current_phase),
        " · mode ",
        h(
          "span",
          { class: `badge ${s.kernel_mode === "NORMAL" ? "green" : s.kernel_mode === "DEGRADED" ? "amber" : "red"}` },
          s.kernel_mode,
        ),
      ),
      h(
        "p",
        {},
        "reality ",
        h(
          "span",
          { class: `badge ${s.reality_green ? "green" : "red"}`, id: "reality" },
          s.reality_green ? "green" : "red",
        ),
        ` · checks passing ${passing}/${s.checks_summary.length}`,
      ),
    );
    if (failing.length) tile.append(h("ul", { id: "failing" }, ...failing.map((c) => h("li", {}, c.name))));
  } catch (err) {
    if (err instanceof ApiError && err.code === "oa_surface_missing" && /no kernel surfaces yet/.test(err.message)) {
      tile.append(
        h(
          "p",
          { id: "kernel-none" },
          h("span", { class: "badge grey" }, "not set up"),
          " This project has no OA kernel surfaces yet, so there is no kernel state to show and the OA run gate lets runs through.",
        ),
        h(
          "p",
          { class: "muted" },
          "To track branch, phase and reality checks here, run ",
          h("code", {}, "pmagent oa init"),
          " in the project.",
        ),
      );
    } else if (err instanceof ApiError && (err.code === "oa_surface_missing" || err.code === "oa_surface_invalid")) {
      tile.append(
        h(
          "p",
          { id: "kernel-problem" },
          h("span", { class: "badge amber" }, "needs attention"),
          " A kernel surface is missing or invalid:",
        ),
        h("pre", {}, err.message),
      );
    } else tile.append(h("p", { class: "error" }, errorText(err)));
  }
  return tile;
}

async function kaiTile(lane: { layer: string; name: string }, project: string): Promise<HTMLElement> {
  const tile = h(
    "section",
    { class: "tile", id: "kai", "aria-labelledby": "kai-h" },
    h("h2", { id: "kai-h" }, `Kai · ${lane.layer}/${lane.name}`),
  );
  for (const type of ["lane_status", "what_changed"]) {
    try {
      const r = await api<{ summary_md: string }>("POST", "/v1/kai", {
        version: "kai_request_v1",
        request_id: `console-${Date.now()}`,
        from: { actor_type: "human", actor_id: "console" },
        project_id: project,
        type,
        lane: { layer: lane.layer, name: lane.name },
        params: {},
      });
      const md = renderMarkdown(r.summary_md);
      md.dataset.kai = type;
      tile.append(
        md,
        h(
          "details",
          { class: "source" },
          h("summary", {}, "Markdown source"),
          h("pre", { "data-kai-source": type }, r.summary_md),
        ),
      );
    } catch (err) {
      tile.append(h("p", { class: "error" }, `${type}: ${errorText(err)}`));
    }
  }
  return tile;
}

async function inboxTile(): Promise<HTMLElement> {
  const tile = h(
    "section",
    { class: "tile", id: "inbox-tile", "aria-labelledby": "inbox-tile-h" },
    h("h2", { id: "inbox-tile-h" }, "Waiting for a person"),
  );
  try {
    const i = await api<{ waiting_runs: unknown[]; proposals: unknown[]; entries: unknown[]; denials: unknown[] }>(
      "GET",
      "/v1/inbox?limit=200",
    );
    const total = i.waiting_runs.length + i.proposals.length + i.entries.length + i.denials.length;
    tile.append(
      h(
        "p",
        {},
        total === 0
          ? "Nothing waits for a person."
          : `${total} item${total === 1 ? "" : "s"}: ${i.waiting_runs.length} waiting run(s), ${i.proposals.length} proposal(s), ${i.entries.length} entr${i.entries.length === 1 ? "y" : "ies"} for a human, ${i.denials.length} OA denial(s).`,
      ),
      h("p", {}, h("a", { href: "#/inbox" }, "Open the inbox")),
    );
  } catch (err) {
    tile.append(h("p", { class: "error" }, errorText(err)));
  }
  return tile;
}

/** A form to post an entry to a lane's role: the kinds the role takes, a summary and details. */
function newEntryForm(who: WhoAmI): HTMLElement {
  const kindsOf = new Map<string, string[]>();
  for (const l of who.lanes) for (const r of l.roles) kindsOf.set(r, l.kinds?.[r] ?? []);
  const to = h(
    "select",
    { id: "new-to", name: "to" },
    ...[...kindsOf.keys()].map((r) => h("option", { value: r }, r)),
  ) as HTMLSelectElement;
  const kind = h("select", { id: "new-kind", name: "kind" }) as HTMLSelectElement;
  const fillKinds = () =>
    kind.replaceChildren(...(kindsOf.get(to.value) ?? []).map((k) => h("option", { value: k }, k)));
  to.addEventListener("change", fillKinds);
  fillKinds();
  const summary = h("input", {
    type: "text",
    id: "new-summary",
    name: "summary",
    required: "",
    maxlength: "300",
  }) as HTMLInputElement;
  const details = h("textarea", { id: "new-details", name: "details", rows: "3" }) as HTMLTextAreaElement;
  const error = h("p", { class: "error", role: "alert", id: "new-error" });
  const form = h(
    "form",
    { id: "new-entry", class: "tile" },
    h("h2", {}, "New entry"),
    h("label", { for: "new-to" }, "to "),
    to,
    " ",
    h("label", { for: "new-kind" }, "kind "),
    kind,
    " ",
    h("label", { for: "new-summary" }, "summary "),
    summary,
    h("label", { for: "new-details" }, " details "),
    details,
    " ",
    h("button", { type: "submit" }, "Post"),
    error,
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const payload: Record<string, string> = { summary: summary.value };
    if (details.value.trim() !== "") payload.details = details.value;
    api<StoredEntry>("POST", "/v1/entries", { to: to.value, kind: kind.value, payload })
      .then((created) => (location.hash = `#/entries/${encodeURIComponent(created.entry.id)}`))
      .catch((err: unknown) => (error.textContent = errorText(err)));
  });
  return form;
}

export async function boardPage(who: WhoAmI): Promise<void> {
  const roles = who.lanes.flatMap((l) => l.roles);
  // The board as the stream sent it: whole on connect (`entries`), then the entries that changed.
  const byId = new Map<string, StoredEntry>();
  let list: StoredEntry[] = [];
  let kind = "";
  // Why a card dropped on another status did not move (the board's refusal).
  const moveError = h("p", { class: "error", role: "alert", id: "board-error" });
  const holder = h("div", {}, boardTable([], roles, kind, who.actor, moveError));
  const kinds = h("select", { id: "board-kind" }, h("option", { value: "" }, "any")) as HTMLSelectElement;
  kinds.addEventListener("change", () => {
    kind = kinds.value;
    holder.replaceChildren(boardTable(list, roles, kind, who.actor, moveError));
  });
  const status = h("span", { class: "live", id: "board-live", role: "status" });
  const tiles = h("div", { class: "tiles" });
  const newEntry = h("details", { id: "new-entry-holder" }, h("summary", {}, "New entry…"), newEntryForm(who));
  main().replaceChildren(
    h("h1", {}, `Lane board · ${who.project_id} `, status),
    tiles,
    newEntry,
    h("form", { class: "filters", role: "search" }, h("label", { for: "board-kind" }, "kind "), kinds),
    moveError,
    holder,
  );
  // A change that comes while a card is being dragged waits for the drop: redrawing the board
  // under the pointer would take the card out of the person's hand (the browser ends the drag).
  let dragging = false;
  let stale = false;
  holder.addEventListener("dragstart", () => (dragging = true));
  holder.addEventListener("dragend", () => {
    dragging = false;
    if (stale) show();
  });
  const show = () => {
    stale = dragging;
    if (dragging) return;
    list = [...byId.values()];
    const known = new Set(Array.from(kinds.options).map((o) => o.value));
    for (const k of new Set(list.map((s) => s.entry.kind)))
      if (!known.has(k)) kinds.append(h("option", { value: k }, k));
    holder.replaceChildren(boardTable(list, roles, kind, who.actor, moveError));
  };
  listen(
    "/v1/entries/stream",
    {
      entries: (data) => {
        byId.clear();
        for (const s of data as unknown as StoredEntry[]) byId.set(s.entry.id, s);
        show();
      },
      changes: (data) => {
        for (const s of data as unknown as StoredEntry[])
          if ((byId.get(s.entry.id)?.version ?? 0) < s.version) byId.set(s.entry.id, s);
        show();
      },
    },
    status,
  );
  const [inbox, kernel] = await Promise.all([inboxTile(), kernelTile()]);
  tiles.append(inbox, kernel);
  if (who.lanes[0]) tiles.append(await kaiTile(who.lanes[0], who.project_id));
}
