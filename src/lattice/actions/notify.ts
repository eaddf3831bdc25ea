import { RefusedError, UnavailableError, type Redactor } from "../../core/index.js";

export interface Notification {
  message: string;
  /** info, warning, error… (free-form, default info). */
  level: string;
  title?: string;
  project_id: string;
  run_id?: string;
  role?: string;
  work_item_id?: string;
  /** Lets a receiver drop a repeated delivery. */
  idempotency_key: string;
}

export interface Notifier {
  readonly name: string;
  /**
   * True when delivering the same notification again is safe: the receiver can drop a repeat by
   * its idempotency key. An interrupted NOTIFY_USER is sent again only when all notifiers say so.
   */
  readonly idempotent?: boolean;
  notify(notification: Notification): Promise<void>;
}

/** Writes one line per notification to the supervisor's console (stderr by default). */
export class ConsoleNotifier implements Notifier {
  readonly name = "console";
  // A line repeated on the restarted supervisor's console, after a crash cut the first one off, is harmless.
  readonly idempotent = true;
  constructor(
    private readonly redactor: Redactor,
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  async notify(n: Notification): Promise<void> {
    const who = [n.role, n.run_id, n.work_item_id].filter(Boolean).join(" ");
    const text = `[pmagent notify] ${n.level.toUpperCase()}${n.title ? ` ${n.title}:` : ""} ${n.message}${who ? ` (${who})` : ""}`;
    this.write(`${this.redactor.redact(text)}\n`);
  }
}

/** Connection errors after which the request certainly did not reach the receiver. */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_INVALID_URL",
]);

/** The system error code behind a fetch failure (undici wraps it in `cause`). */
function causeCode(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === "string" ? cause.code : "";
}

/** POSTs each notification as JSON to a webhook (config `notify.webhook_url`). */
export class WebhookNotifier implements Notifier {
  readonly name = "webhook";
  // Every delivery carries the Idempotency-Key header: the receiver drops a repeat.
  readonly idempotent = true;
  constructor(
    private readonly url: string,
    private readonly redactor: Redactor,
    private readonly timeoutMs = 10_000,
  ) {}

  async notify(n: Notification): Promise<void> {
    const target = new URL(this.url);
    let res: Response;
    try {
      res = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": n.idempotency_key, "user-agent": "pmagent" },
        body: JSON.stringify(this.redactor.redactValue(n)),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      // Past connecting (a timeout, a reset), the receiver may have taken the notification: a
      // repeat goes out under the same key, and if every attempt ends so its outcome is unknown, not failed.
      const maybeDelivered = !NOT_CONNECTED.has(causeCode(err));
      throw new UnavailableError(
        "webhook_unreachable",
        `notification webhook ${target.origin} is unreachable: ${(err as Error).message}`,
        {
          details: maybeDelivered ? { maybe_delivered: true } : undefined,
        },
      );
    }
    await res.body?.cancel();
    if (res.status >= 500 || res.status === 429)
      throw new UnavailableError(
        "webhook_failed",
        `notification webhook ${target.origin} answered ${res.status}; retrying later`,
      );
    if (!res.ok)
      throw new RefusedError(
        "webhook_refused",
        `notification webhook ${target.origin} refused the notification with ${res.status}: check notify.webhook_url`,
      );
  }
}
