import type { Command } from "./commander.js";
import { LANE_SPRITES, runLaneSprite } from "../lane/index.js";

export function registerLane(program: Command): void {
  program
    .command("lane-sprite")
    .description(
      `run a built-in doc_update lane sprite (${Object.keys(LANE_SPRITES).join(", ")}) as a role's runner.command; it reads its entry and workspace from the supervisor's environment. ` +
        "With `model` in the project's pmagent.config.json, aya and sho answer through the LLM role agent (as `pmagent agent --lane-artifact doc_update_proposal_v1|doc_update_review_v1`): " +
        "Aya as orchestrator, Sho as reviewer at the lane's review_level (default hard_gate), the guard still refusing what it refuses; the key comes from the supervisor (FETCH_CREDENTIAL, the role's credentials must list it)",
    )
    .argument(
      "<name>",
      "the sprite: aya (proposal), sho (review), tsugu (apply + OPEN_PR), gen (PM snapshot), hana (router)",
    )
    .action(async (name: string) => {
      process.exitCode = await runLaneSprite(name);
    });
}
