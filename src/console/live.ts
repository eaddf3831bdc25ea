/// <reference lib="dom" />
/**
 * Live views over server-sent events. A run's stream ends with an `end` event: the console closes
 * its EventSource there, so a finished run is not asked again (the browser would otherwise reconnect
 * every second). Leaving a page closes its streams.
 */
import type { Json } from "./dom.js";

let live: EventSource[] = [];

export function stopLive(): void {
  for (const s of live) s.close();
  live = [];
}

export interface LiveHandlers {
  [event: string]: (data: Json, id: string) => void;
}

/**
 * Listen to `url`; `status` (if given) shows "live", "reconnecting…" or "ended", and carries the
 * same word in `data-live` for tests and assistive tools.
 */
export function listen(url: string, handlers: LiveHandlers, status?: HTMLElement): EventSource {
  const source = new EventSource(url);
  const show = (word: string) => {
    if (!status) return;
    status.textContent = word;
    status.dataset.live = word.replace(/…$/, "");
  };
  show("connecting…");
  source.addEventListener("open", () => show("live"));
  source.addEventListener("error", () => show(source.readyState === EventSource.CLOSED ? "ended" : "reconnecting…"));
  for (const [event, fn] of Object.entries(handlers)) {
    if (event === "end") continue;
    source.addEventListener(event, (e) =>
      fn(JSON.parse((e as MessageEvent<string>).data) as Json, (e as MessageEvent).lastEventId),
    );
  }
  source.addEventListener("end", (e) => {
    source.close();
    live = live.filter((s) => s !== source);
    show("ended");
    handlers.end?.(JSON.parse((e as MessageEvent<string>).data) as Json, (e as MessageEvent).lastEventId);
  });
  live.push(source);
  return source;
}
