import type { FastifyRequest } from "fastify";
import { RefusedError } from "../core/index.js";
import type { Auth } from "./auth.js";

export const SESSION_COOKIE = "pmagent_token";

declare module "fastify" {
  interface FastifyRequest {
    actor: string;
  }
  interface FastifyContextConfig {
    /** Reachable without a token. Deny by default: only a route declared with `config: PUBLIC` is. */
    public?: boolean;
  }
}

/** The mark of a route anyone may reach (the console's files, the OpenAPI document, sign-in). */
export const PUBLIC = { public: true } as const;

/** The names a loopback server answers to whatever the configuration says. */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/** `name[:port]` of a Host header or an allowed-host entry, name lower-cased; undefined if malformed. */
function splitHost(text: string): { name: string; port: number | undefined } | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(text.trim().toLowerCase());
  if (!m) return undefined;
  return { name: m[1]!, port: m[2] === undefined ? undefined : Number(m[2]) };
}

function shown(text: string): string {
  return JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
}

/**
 * Which Host and Origin a request may carry. Without tokens the server acts as the first human for
 * anyone who reaches it, so it answers only to loopback names and the configured `allowed_hosts`:
 * a page using DNS rebinding reaches it under its own name and is refused. With tokens, a request
 * that does not carry its token in the Authorization header (the console's cookie, sign-in) must
 * come from this server's own origin, so another site cannot use the browser's cookie.
 */
export class HostPolicy {
  private readonly names: Array<{ name: string; port: number | undefined }>;

  /** `listenHost`: the address the server listens on (also a name it answers to); `port()`: its port once known. */
  constructor(
    listenHost: string,
    allowedHosts: readonly string[],
    private readonly port: () => number,
  ) {
    const listen = listenHost.includes(":") ? `[${listenHost}]` : listenHost;
    this.names = [...LOOPBACK_NAMES, listen, ...allowedHosts].map((h) => splitHost(h)).filter((h) => h !== undefined);
  }

  /** `name:port` strings for the MCP transport's own exact Host check. */
  hostList(): string[] {
    return [...new Set(this.names.map((h) => `${h.name}:${h.port ?? this.port()}`))];
  }

  /** Whether `host` (a Host header, or an Origin's host with `defaultPort`) names this server. */
  allows(host: string, defaultPort = 80): boolean {
    const h = splitHost(host);
    if (h === undefined) return false;
    const port = h.port ?? defaultPort;
    return this.names.some((n) => n.name === h.name && (n.port ?? this.port()) === port);
  }

  /** Whether an Origin header names this server (`sameHost`: also the request's own Host, with tokens). */
  allowsOrigin(origin: string, sameHost?: string): boolean {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    // The URL parser drops a scheme's default port, as browsers do in the Host header.
    if (sameHost !== undefined && url.host === sameHost.trim().toLowerCase()) return true;
    const defaultPort = url.protocol === "https:" ? 443 : 80;
    return this.allows(url.host, defaultPort);
  }

  /** Refuse a request whose Host or Origin this server must not answer (see the class comment). */
  check(req: FastifyRequest, tokensRequired: boolean): void {
    const host = req.headers.host ?? "";
    const origin = req.headers.origin;
    if (!tokensRequired) {
      if (!this.allows(host)) {
        throw new RefusedError(
          "host_not_allowed",
          `Host ${shown(host)} is not allowed: without bearer tokens this server answers only to ${this.hostList().join(", ")} (a web page reaching it under another name would act as a human); add the name to server.allowed_hosts in the config, or configure tokens`,
        );
      }
      if (origin !== undefined && !this.allowsOrigin(origin)) {
        throw new RefusedError(
          "origin_not_allowed",
          `Origin ${shown(origin)} is not allowed: without bearer tokens this server answers only to pages served from ${this.hostList().join(", ")}; add the name to server.allowed_hosts in the config, or configure tokens`,
        );
      }
      return;
    }
    // A bearer header cannot be sent by another site without the token; a cookie can.
    if (origin !== undefined && req.headers.authorization === undefined && !this.allowsOrigin(origin, host)) {
      throw new RefusedError(
        "origin_not_allowed",
        `Origin ${shown(origin)} is not this server's: a request authenticated by the session cookie must come from the console served by this server; other clients send Authorization: Bearer <token>`,
      );
    }
  }
}

export function cookieToken(header: string | undefined): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === SESSION_COOKIE) {
      try {
        return decodeURIComponent(v.join("="));
      } catch {
        return v.join("=");
      }
    }
  }
  return undefined;
}

/**
 * The one access decision of every request, on the route the router matched (after it decoded the
 * path), never on the raw URL: Host and Origin first, then the caller from its token (or the
 * session cookie). Unmatched paths are not public either, so a spelling of a path never skips it.
 */
export function authorize(req: FastifyRequest, auth: Auth, hosts: HostPolicy): void {
  hosts.check(req, auth.required);
  if (req.routeOptions.config.public === true) return;
  const header = req.headers.authorization;
  const cookie = header === undefined ? cookieToken(req.headers.cookie) : undefined;
  req.actor = auth.actorFor(header ?? (cookie !== undefined ? `Bearer ${cookie}` : undefined));
}
