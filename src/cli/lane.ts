import type { Command } from "commander";
import { LANE_SPRITES, runLaneSprite } from "../lane/index.js";

export function registerLane(program: Command): void {
  program
    .command("lane-sprite")
    .description(`run a built-in doc_update lane sprite (${Object.keys(LANE_SPRITES).join(", ")}) as a role's runner.command; it reads its entry and workspace from the supervisor's environment`)
    .argument("<name>", "the sprite: aya (proposal), sho (review), tsugu (apply + OPEN_PR), gen (PM snapshot), hana (router)")
    .action((name: string) => {
      process.exitCode = runLaneSprite(name);
    });
}
