/**
 * The example doc_update lane (examples/doc-update-lane/pmagent.config.json, kept equal by a test):
 * the project `pmagent init` writes, whose roles are each run by their built-in sprite.
 */
import { defaultConfig, type ConfigInput } from "../config/index.js";

export function exampleLaneConfig(projectId: string): ConfigInput {
  return defaultConfig(projectId);
}
