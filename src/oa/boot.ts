import { randomUUID } from "node:crypto";
import { nowIso } from "../core/index.js";
import { computeKernel, interpretation } from "./kernel.js";
import { BootEnvelopeSchema, type BootEnvelope } from "./schemas.js";
import { loadSurfaces } from "./surfaces.js";
import type { OAWorkspace } from "./workspace.js";

/** `pmagent boot oa`: the kernel's mode and what it allows, for a new OA session. */
export function bootEnvelope(
  ws: OAWorkspace,
  options: { clock?: () => number; uuid?: () => string } = {},
): BootEnvelope {
  const kernel = computeKernel(loadSurfaces(ws));
  return BootEnvelopeSchema.parse({
    oa_boot_envelope: {
      timestamp: nowIso(options.clock),
      kernel: { phase: kernel.phase, branch: kernel.branch, mode: kernel.mode },
      interpretation: interpretation(kernel),
      session_metadata: { session_id: `oa-session-${(options.uuid ?? randomUUID)()}`, workspace: ws.root },
    },
  });
}

/** Exit code of `pmagent boot oa`: 3 when the kernel is BLOCKED (documented in the root help). */
export function bootExitCode(envelope: BootEnvelope): number {
  return envelope.oa_boot_envelope.kernel.mode === "BLOCKED" ? 3 : 0;
}
