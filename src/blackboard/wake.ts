import type { Store } from "../store/index.js";

export const OPEN_CHANNEL = "bb_open";

/** The wake-up sent when an entry becomes open: its addressee, a newline, its kind. */
export function openPayload(to: string, kind: string): string {
  return `${to}\n${kind}`;
}

interface Waiter {
  role: string;
  kinds: readonly string[];
  wake(): void;
}

/**
 * The claimers of one process waiting for open entries, over one subscription per store. Each
 * wake-up wakes one waiting claimer of that role and kind (not all of them: the others would only
 * find the entry taken and go back to sleep), and counts per role, so that a claimer that found
 * nothing can tell whether something was posted while it looked.
 */
class OpenWaiters {
  private readonly queue: Waiter[] = [];
  private readonly seen = new Map<string, number>();
  readonly ready: Promise<unknown>;

  constructor(store: Store) {
    this.ready = store.listen(OPEN_CHANNEL, (payload) => this.notified(payload));
  }

  /** Wake-ups seen for `role` so far. */
  count(role: string): number {
    return this.seen.get(role) ?? 0;
  }

  private notified(payload: string): void {
    const [role = "", kind] = payload.split("\n");
    if (role === "") {
      for (const r of this.seen.keys()) this.seen.set(r, this.count(r) + 1);
      for (const w of this.queue.splice(0)) w.wake();
      return;
    }
    this.seen.set(role, this.count(role) + 1);
    const i = this.queue.findIndex((w) => w.role === role && (kind === undefined || w.kinds.includes(kind)));
    if (i >= 0) this.queue.splice(i, 1)[0]!.wake();
  }

  /** Resolve when woken for `role`/`kinds`, after `waitMs`, or on abort, whichever first. */
  wait(role: string, kinds: readonly string[], waitMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const waiter: Waiter = {
        role,
        kinds,
        wake: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", leave);
          resolve();
        },
      };
      const leave = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        waiter.wake();
      };
      const timer = setTimeout(leave, waitMs);
      signal?.addEventListener("abort", leave, { once: true });
      this.queue.push(waiter);
    });
  }
}

const waitersByStore = new WeakMap<Store, OpenWaiters>();

/** The process's waiters on `store`, subscribed (a failed subscription is dropped, to be tried again). */
export async function openWaiters(store: Store): Promise<OpenWaiters> {
  let waiters = waitersByStore.get(store);
  if (!waiters) {
    waiters = new OpenWaiters(store);
    waitersByStore.set(store, waiters);
  }
  try {
    await waiters.ready;
  } catch (err) {
    waitersByStore.delete(store);
    throw err;
  }
  return waiters;
}

/** Resolve when an open entry may be waiting for `role` (notification or `pollMs`, whichever first). */
export async function waitForOpen(store: Store, role: string, pollMs: number, signal?: AbortSignal): Promise<void> {
  let wake!: () => void;
  const woke = new Promise<void>((resolve) => (wake = resolve));
  const unlisten = await store.listen(OPEN_CHANNEL, (payload) => {
    const to = payload.split("\n")[0];
    if (to === role || to === "") wake();
  });
  const timer = setTimeout(wake, pollMs);
  signal?.addEventListener("abort", wake, { once: true });
  try {
    await woke;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", wake);
    await unlisten();
  }
}
