import type { Command } from "./commander.js";
import { UsageError } from "../core/index.js";
import { findConfig, loadProject, type Project } from "../config/index.js";
import {
  AGENT_ROLES,
  REVIEW_LEVELS,
  parseAgentRole,
  parseReviewLevel,
  runRoleAgent,
  type AgentRole,
  type ReviewLevel,
} from "../prompt/index.js";
import {
  LANE_AGENT_ARTIFACTS,
  laneAgentRole,
  laneContext,
  parseLaneArtifact,
  runLaneAgent,
  type LaneAgentArtifact,
} from "../lane/index.js";
import { globalOptions } from "./context.js";
import { intOption } from "./output.js";

interface AgentFlags {
  role?: AgentRole;
  reviewLevel?: ReviewLevel;
  lane?: string;
  laneArtifact?: LaneAgentArtifact;
  cycle?: number;
  entryFile?: string;
  stream?: boolean;
}

export function registerAgent(program: Command): void {
  program
    .command("agent")
    .description(
      "the LLM role agent, run as a sprite: answer the work item ($PMAGENT_ENTRY_FILE) as ROLE through the model, write the answer as an artifact and report Lattice events on stdout and in the outbox. " +
        "As orchestrator it may edit plan and document files within the lane's allowed_paths through the apply_patch and update_plan tools (each change an ARTIFACT event). " +
        "With --lane-artifact it takes a doc_update lane step instead (what `pmagent lane-sprite aya|sho` run when `model` is configured): doc_update_proposal_v1 (Aya, orchestrator) or doc_update_review_v1 (Sho, reviewer, guarded), written as the artifact the next role reads",
    )
    .option(
      "--role <role>",
      `prompt role: ${AGENT_ROLES.join(", ")} (required unless --lane-artifact gives it)`,
      parseAgentRole,
    )
    .option(
      "--lane-artifact <kind>",
      `answer as a doc_update lane step producing this artifact: ${Object.keys(LANE_AGENT_ARTIFACTS).join(", ")}`,
      parseLaneArtifact,
    )
    .option(
      "--review-level <level>",
      `reviewer only: ${REVIEW_LEVELS.join(", ")} (default: the lane's review_level with --lane-artifact, else hard_gate)`,
      parseReviewLevel,
    )
    .option("--lane <lane>", "ledger: the lane, layer/name (default: the lane configuring the entry's role)")
    .option(
      "--cycle <n>",
      "ledger: the cycle number (default: the entry's payload.cycle, else 1)",
      intOption("--cycle", 1),
    )
    .option(
      "--entry-file <file>",
      "the work item (default $PMAGENT_ENTRY_FILE, else .lattice/entry.json in the workspace)",
    )
    .option("--stream", "receive the answer as server-sent events (the default: model.request.stream)")
    .option("--no-stream", "receive the answer in one plain JSON response")
    .action(async (flags: AgentFlags, cmd: Command) => {
      const role = flags.role ?? (flags.laneArtifact ? laneAgentRole(flags.laneArtifact) : undefined);
      if (role === undefined)
        throw new UsageError(
          "missing_option",
          `give --role (${AGENT_ROLES.join(", ")}) or --lane-artifact (${Object.keys(LANE_AGENT_ARTIFACTS).join(", ")})`,
        );
      if (flags.laneArtifact && role !== laneAgentRole(flags.laneArtifact)) {
        throw new UsageError(
          "conflicting_options",
          `--lane-artifact ${flags.laneArtifact} is answered by the ${laneAgentRole(flags.laneArtifact)} role, not by ${role}: drop --role or make it ${laneAgentRole(flags.laneArtifact)}`,
        );
      }
      if (flags.reviewLevel !== undefined && role !== "reviewer") {
        throw new UsageError("conflicting_options", `--review-level applies to the reviewer role only, not to ${role}`);
      }
      if (flags.lane !== undefined && flags.laneArtifact)
        throw new UsageError(
          "conflicting_options",
          "--lane does not apply with --lane-artifact: the lane is the one that configures the run's role",
        );
      if (flags.lane !== undefined && !/^[^/\s]+\/[^/\s]+$/.test(flags.lane))
        throw new UsageError(
          "invalid_option",
          `--lane expects LAYER/NAME (e.g. layer_b/doc_update), got "${flags.lane}"`,
        );
      const report = flags.laneArtifact
        ? await runLaneAgent(laneContext(process.env, { entryFile: flags.entryFile }), {
            artifact: flags.laneArtifact,
            reviewLevel: flags.reviewLevel,
            cycle: flags.cycle,
            stream: flags.stream,
          })
        : await runRoleAgent({ ...flags, role, project: currentProject(cmd) });
      if (report.status === "waiting")
        process.stderr.write(`pmagent agent: entry ${report.entry_id} is ${report.summary}\n`);
      else
        process.stderr.write(
          `pmagent agent: ${report.status} for entry ${report.entry_id}; answer in ${report.artifact}${report.revision_requested ? "; revision requested" : ""}\n`,
        );
      if (report.status === "failure") process.exitCode = 1;
    });
}

/** The project when there is one (--config, or found walking up from the workspace). */
function currentProject(cmd: Command): Project | undefined {
  const configPath = globalOptions(cmd).config ?? findConfig(process.cwd());
  return configPath === undefined ? undefined : loadProject({ configPath });
}
