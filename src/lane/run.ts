import { PmagentError, UsageError } from "../core/index.js";
import { laneContext, type LaneRunContext } from "./context.js";
import { runAya } from "./aya.js";
import { runSho } from "./sho.js";
import { runTsugu } from "./tsugu.js";
import { runGen } from "./gen.js";
import { runHana } from "./hana.js";

/** The built-in sprites of the doc_update lane, by the name `pmagent lane-sprite` takes. */
export const LANE_SPRITES: Record<string, (ctx: LaneRunContext) => void> = { aya: runAya, sho: runSho, tsugu: runTsugu, gen: runGen, hana: runHana };

/**
 * Run one lane sprite in its run. A failure is reported as an ERROR event (the run fails, the
 * entry goes to error) and the process exits 1.
 */
export function runLaneSprite(name: string, env: NodeJS.ProcessEnv = process.env): number {
  const run = LANE_SPRITES[name.toLowerCase()];
  if (!run) throw new UsageError("unknown_lane_sprite", `unknown lane sprite "${name}": use one of ${Object.keys(LANE_SPRITES).join(", ")}`);
  const ctx = laneContext(env);
  try {
    run(ctx);
    return 0;
  } catch (err) {
    const e = err instanceof PmagentError ? err : undefined;
    ctx.sprite.error(e ? e.message : `lane sprite ${name} failed: ${(err as Error).message}`, { code: e?.code ?? "internal" });
    return 1;
  }
}
