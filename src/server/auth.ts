import { timingSafeEqual } from "node:crypto";
import { RefusedError, UsageError, PmagentError } from "../core/index.js";
import type { Config } from "../config/index.js";

/** `PMAGENT_TOKENS="TOKEN=Actor,TOKEN2=Actor2"`: tokens stay in the environment, not the repository. */
export function parseTokenList(text: string, source = "PMAGENT_TOKENS"): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")) {
    const eq = part.lastIndexOf("=");
    const token = eq > 0 ? part.slice(0, eq).trim() : "";
    const actor = eq > 0 ? part.slice(eq + 1).trim() : "";
    // The message never echoes the token: it is a secret even when malformed.
    if (token === "" || actor === "")
      throw new UsageError(
        "invalid_tokens",
        `${source}: each item must be TOKEN=Actor (item ${Object.keys(out).length + 1} is not)`,
      );
    if (token.length < 16)
      throw new UsageError(
        "invalid_tokens",
        `${source}: the token for ${actor} is shorter than 16 characters; use a long random token`,
      );
    if (!/^[A-Za-z0-9_.-]+$/.test(actor))
      throw new UsageError(
        "invalid_tokens",
        `${source}: actor "${actor}" is not a valid actor name (letters, digits, _ . -)`,
      );
    out[token] = actor;
  }
  return out;
}

/** Tokens of the config's `server.tokens`, overridden per token by PMAGENT_TOKENS. */
export function tokenTable(config: Config, env: NodeJS.ProcessEnv = process.env): Map<string, string> {
  const fromEnv = env.PMAGENT_TOKENS ? parseTokenList(env.PMAGENT_TOKENS) : {};
  return new Map(Object.entries({ ...config.server.tokens, ...fromEnv }));
}

export function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Without a token anyone on the network could act as a human: refuse to listen beyond loopback. */
export function assertMayListen(host: string, tokens: ReadonlyMap<string, string>): void {
  if (tokens.size === 0 && !isLoopback(host)) {
    throw new RefusedError(
      "no_tokens",
      `refusing to listen on ${host} without bearer tokens: set PMAGENT_TOKENS="TOKEN=Actor" or server.tokens in the config, or listen on 127.0.0.1`,
    );
  }
}

export class UnauthorizedError extends PmagentError {
  constructor(message: string) {
    super("unauthorized", message, { kind: "refused" });
  }
}

/**
 * Who a request acts as. With tokens configured, a valid bearer token is required and its actor is
 * the caller; with none (loopback only), the caller is the first human, as for the CLI.
 */
export class Auth {
  private readonly entries: Array<{ token: Buffer; actor: string }>;

  constructor(
    tokens: ReadonlyMap<string, string>,
    private readonly localActor: string,
  ) {
    this.entries = [...tokens].map(([token, actor]) => ({ token: Buffer.from(token), actor }));
  }

  get required(): boolean {
    return this.entries.length > 0;
  }

  actorFor(authorization: string | undefined): string {
    if (!this.required) return this.localActor;
    if (authorization === undefined || authorization === "")
      throw new UnauthorizedError("this server needs a bearer token: send Authorization: Bearer <token>");
    const m = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!m) throw new UnauthorizedError("the Authorization header must be Bearer <token>");
    const given = Buffer.from(m[1]!);
    let actor: string | undefined;
    // Compare against every token in constant time per token, so timing says nothing about which matched.
    for (const e of this.entries)
      if (e.token.length === given.length && timingSafeEqual(e.token, given)) actor = e.actor;
    if (actor === undefined) throw new UnauthorizedError("unknown bearer token");
    return actor;
  }
}
