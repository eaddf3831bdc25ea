import { UsageError } from "../core/index.js";

/** Deciding needs an explicit identity: defaulting to a human would make the check meaningless. */
export function decider(opts: { as?: string }): string {
  const actor = opts.as ?? process.env.PMAGENT_ACTOR;
  if (!actor)
    throw new UsageError(
      "actor_required",
      "say who decides: pass --as NAME (a human listed in the config's humans) or set PMAGENT_ACTOR",
    );
  return actor;
}
