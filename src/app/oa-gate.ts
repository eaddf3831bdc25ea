import type { Project } from "../config/index.js";
import { gateRun } from "../oa/index.js";
import type { RunGate } from "../lattice/index.js";

/**
 * DESIGN.md §1: the supervisor consults OA's SafeOPSDecision before starting a run. A project
 * without OA surfaces (or with `oa.gate: false`) has nothing to judge: no decision is recorded.
 */
export function oaRunGate(project: Project, env: NodeJS.ProcessEnv = process.env): RunGate {
  return {
    async decide({ role, entry }) {
      if (!entry) return null;
      const summary = entry.payload.summary;
      const result = await gateRun({
        root: project.root,
        config: project.config,
        role,
        entry: { id: entry.id, kind: entry.kind, ...(typeof summary === "string" ? { title: summary } : {}) },
        env,
      });
      if (result.skipped) return null;
      return { decision: result.decision, reasoning: result.reasoning, conditions: result.conditions };
    },
  };
}
