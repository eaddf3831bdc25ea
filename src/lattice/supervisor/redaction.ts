/**
 * What a run's output is redacted with: the supervisor's own secrets, the secret inputs this
 * process handed to the run, its role's credentials and every value of the secrets file.
 */
import { hasCode, UnavailableError, type Redactor } from "../../core/index.js";
import { SecretStore } from "../actions/index.js";
import type { RunRecord } from "../runs/index.js";
import { role, type SupervisorContext } from "./context.js";

/** The project's secret store, made on first use. */
export function secrets(ctx: SupervisorContext): SecretStore {
  return (ctx.secretStore ??= new SecretStore({
    env: ctx.env,
    root: ctx.options.project.root,
    file: ctx.options.project.config.secrets.file,
  }));
}

/**
 * The redactor for one run's output: the supervisor's own secrets, the secret inputs this
 * process handed to the run, the current value of every credential the run's role may fetch
 * (config `roles[].credentials`) and every value of the secrets file, read again from the
 * secret store each time a run is launched or followed. That last part is what makes redaction survive a restart: a supervisor that
 * re-attaches to a resumed sprite never saw the FETCH_CREDENTIAL it answered, but the role's
 * credentials are exactly the values such a sprite can have been given. Nothing about a secret
 * is stored, not even a salted hash: a hash cannot find the secret inside arbitrary output
 * without hashing every substring, and a hash of a short secret kept beside its salt in the
 * database could be brute-forced from a copy of it. Limit: a credential rotated between its
 * delivery and the restart is redacted by its new value only.
 */
export function runRedactor(ctx: SupervisorContext, run: RunRecord): Redactor {
  const all = [...(ctx.runSecrets.get(run.id) ?? []), ...credentialValues(ctx, run), ...secretFileValues(ctx, run)];
  return all.length ? ctx.redactor.withSecrets(all) : ctx.redactor;
}

/**
 * Every value of the secrets file: a sprite may hold any of them, not only its role's. A file
 * that cannot be read or parsed stops a run whose role may fetch credentials (its output could
 * hold a value nobody can redact): redaction never goes on without the values. A run whose
 * role fetches none goes on, with a warning.
 */
function secretFileValues(ctx: SupervisorContext, run: RunRecord): string[] {
  try {
    return secrets(ctx).values();
  } catch (err) {
    const needs = roleFetches(ctx, run.role);
    const why = (err as Error).message;
    if (needs)
      throw new UnavailableError(
        "secrets_unreadable",
        `${why}; run ${run.id} of role ${run.role} is stopped: its role may fetch credentials, and its output cannot be redacted without their values. Fix the secrets file, then start the run again`,
      );
    ctx.log.warn({ run: run.id, err: why }, "secrets file not read for redaction");
    return [];
  }
}

function credentialValues(ctx: SupervisorContext, run: RunRecord): string[] {
  let names: readonly string[];
  try {
    names = role(ctx, run.role).credentials;
  } catch {
    return []; // the role is gone from the config: its credentials are no longer known
  }
  const out: string[] = [];
  for (const name of names) {
    try {
      // Made on first use: a bad secrets.file (outside the root) fails FETCH_CREDENTIAL, not the supervisor.
      out.push(secrets(ctx).get(name));
    } catch (err) {
      // Not set (any more), or the secrets file is unreadable: its value is not known here.
      if (!hasCode(err, "credential_not_found"))
        ctx.log.warn(
          { run: run.id, credential: name, err: (err as Error).message },
          "credential not read for redaction",
        );
    }
  }
  return out;
}

/** Whether a role may fetch credentials (false for a role gone from the config). */
export function roleFetches(ctx: SupervisorContext, name: string): boolean {
  try {
    return role(ctx, name).credentials.length > 0;
  } catch {
    return false;
  }
}
