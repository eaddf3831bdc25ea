import { createRequire } from "node:module";
import type { Logger, pino as Pino } from "pino";
import { Redactor, secretsFromEnv } from "./redact.js";

// pino (a CommonJS package) is required when the first logger is made, not when core is imported:
// a command that never logs (`pmagent emit`, `bb list`) does not pay for loading it.
const requireCjs = createRequire(import.meta.url);
let pinoModule: typeof Pino | undefined;
const loadPino = (): typeof Pino => (pinoModule ??= (requireCjs("pino") as { pino: typeof Pino }).pino);

export type { Logger };

/**
 * The process logger: JSON lines on stderr (stdout belongs to command output), level from
 * PMAGENT_LOG_LEVEL (default "warn"), and every message passed through the redactor.
 */
export function createLogger(name = "pmagent", redactor = new Redactor(secretsFromEnv())): Logger {
  const pino = loadPino();
  return pino(
    {
      name,
      level: process.env.PMAGENT_LOG_LEVEL ?? "warn",
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((a) =>
              typeof a === "string"
                ? redactor.redact(a)
                : a !== null && typeof a === "object"
                  ? redactor.redactValue(a)
                  : a,
            ) as Parameters<typeof method>,
          );
        },
      },
    },
    pino.destination(2),
  );
}
