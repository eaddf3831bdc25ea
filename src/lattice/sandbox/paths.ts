import { realpathSync } from "node:fs";

/** The real path of `p`, or `p` itself when it cannot be resolved (missing, no permission). */
export function realpathOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
