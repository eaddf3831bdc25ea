import { pino, type Logger } from "pino";
import { Redactor, secretsFromEnv } from "./redact.js";

export type { Logger };

/**
 * The process logger: JSON lines on stderr (stdout belongs to command output), level from
 * PMAGENT_LOG_LEVEL (default "warn"), and every message passed through the redactor.
 */
export function createLogger(name = "pmagent", redactor = new Redactor(secretsFromEnv())): Logger {
  return pino(
    {
      name,
      level: process.env.PMAGENT_LOG_LEVEL ?? "warn",
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((a) => (typeof a === "string" ? redactor.redact(a) : a !== null && typeof a === "object" ? redactor.redactValue(a) : a)) as Parameters<typeof method>,
          );
        },
      },
    },
    pino.destination(2),
  );
}
