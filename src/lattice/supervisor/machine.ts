/**
 * The machine a supervisor runs on, as runs and workers name it: `PMAGENT_MACHINE` when set (two
 * machines that share a host name, or containers named at random), else the host name.
 */
import { hostname } from "node:os";
import { UsageError } from "../../core/index.js";

const MACHINE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function machineName(env: NodeJS.ProcessEnv): string {
  const given = env.PMAGENT_MACHINE;
  if (given === undefined || given === "") return hostname();
  if (!MACHINE.test(given)) {
    throw new UsageError(
      "invalid_machine",
      `PMAGENT_MACHINE must be a name of letters, digits, '.', '_' or '-' (at most 63, starting with a letter or digit), got ${JSON.stringify(given)}`,
    );
  }
  return given;
}
