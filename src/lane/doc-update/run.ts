import { PmagentError, UsageError } from "../../core/index.js";
import { laneContext, type LaneRunContext } from "./context.js";
import { runAya } from "./propose.js";
import { runSho } from "./review.js";
import { runTsugu } from "./apply.js";
import { runGen } from "./snapshot.js";
import { runHana } from "./route.js";
import { runLaneAgent, type LaneAgentArtifact } from "./model.js";
import { fetchActionsArtifact } from "./remote.js";
import { PROPOSAL_VERSION, REVIEW_VERSION } from "./schema.js";

/** The built-in sprites of the doc_update lane, by the name `pmagent lane-sprite` takes. */
export const LANE_SPRITES: Record<string, (ctx: LaneRunContext) => void> = {
  aya: runAya,
  sho: runSho,
  tsugu: runTsugu,
  gen: runGen,
  hana: runHana,
};

/** The sprites that run through the LLM role agent when the project configures `model`. */
export const MODEL_LANE_SPRITES: Record<string, LaneAgentArtifact> = { aya: PROPOSAL_VERSION, sho: REVIEW_VERSION };

/** The artifact each sprite reads, which an origin entry may name as a GitHub Actions artifact. */
export const LANE_SPRITE_INPUTS: Record<string, string> = {
  sho: PROPOSAL_VERSION,
  tsugu: REVIEW_VERSION,
  gen: REVIEW_VERSION,
};

/**
 * Run one lane sprite in its context: fetch the input an origin entry names as a GitHub Actions
 * artifact, then Aya and Sho through the model when the project configures `model`, else the
 * deterministic sprite. A failure is reported as an ERROR event (the run fails, the entry goes to
 * error) and 1 returned.
 */
export async function runLaneStep(
  name: string,
  ctx: LaneRunContext,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const key = name.toLowerCase();
  const run = LANE_SPRITES[key];
  if (!run)
    throw new UsageError(
      "unknown_lane_sprite",
      `unknown lane sprite "${name}": use one of ${Object.keys(LANE_SPRITES).join(", ")}`,
    );
  const fail = (err: unknown): number => {
    const e = err instanceof PmagentError ? err : undefined;
    ctx.sprite.error(e ? e.message : `lane sprite ${name} failed: ${(err as Error).message}`, {
      code: e?.code ?? "internal",
    });
    return 1;
  };
  const input = LANE_SPRITE_INPUTS[key];
  try {
    if (input !== undefined) await fetchActionsArtifact(ctx, input, env);
  } catch (err) {
    return fail(err);
  }
  const artifact = MODEL_LANE_SPRITES[key];
  if (artifact !== undefined && ctx.project.config.model !== undefined) {
    // The agent reports its own failures as an ERROR event, then throws for the CLI to print.
    const report = await runLaneAgent(ctx, { artifact, env });
    return report.status === "failure" ? 1 : 0;
  }
  try {
    run(ctx);
    return 0;
  } catch (err) {
    return fail(err);
  }
}

/** Run one lane sprite in its run (`pmagent lane-sprite NAME`): its context from the environment. */
export async function runLaneSprite(name: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (!LANE_SPRITES[name.toLowerCase()])
    throw new UsageError(
      "unknown_lane_sprite",
      `unknown lane sprite "${name}": use one of ${Object.keys(LANE_SPRITES).join(", ")}`,
    );
  return runLaneStep(name, laneContext(env), env);
}
