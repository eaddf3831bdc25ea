import { z } from "zod";

/** Whether the runtime knows `name` as an IANA time zone. */
export function isTimeZoneName(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "expected letters, digits, '.', '_' or '-'");

/** Coding-agent CLIs a role can run as its sprite (runner `agent`). */
export const AGENT_RUNNERS = ["codex", "claude", "gemini"] as const;

export const RunnerSchema = z
  .object({
    /** argv of the sprite; run in the workspace with a scrubbed environment. */
    command: z.array(z.string().min(1)).min(1).optional(),
    /** Instead of `command`: a coding-agent CLI run non-interactively with the entry as its task. */
    agent: z.enum(AGENT_RUNNERS).optional(),
    /** The agent's model (default: its CLI's own). */
    model: z.string().min(1).optional(),
    /** Extra arguments for the agent's CLI. */
    args: z.array(z.string()).optional(),
    /** The agent's model endpoint (default: config `model.base_url`, else the CLI's variable, e.g. OPENAI_BASE_URL). */
    base_url: z.string().url().optional(),
    /** The credential holding the agent's model key (default per agent, e.g. OPENAI_API_KEY); the role must list it in `credentials`. */
    key_credential: z.string().min(1).optional(),
    /** Extra environment variables for the sprite (not secrets: those go through FETCH_CREDENTIAL). */
    env: z.record(z.string(), z.string()).default({}),
    timeout_s: z.number().int().positive().default(3600),
    /** The progress watchdog: no output and no event from the sprite for this long fails the run (default 300; 0: off). */
    idle_timeout_s: z.number().int().nonnegative().optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.command && r.agent)
      ctx.addIssue({ code: "custom", message: "give runner.command or runner.agent, not both" });
    if (!r.command && !r.agent)
      ctx.addIssue({
        code: "custom",
        message: `give runner.command (the sprite's argv) or runner.agent (one of ${AGENT_RUNNERS.join(", ")})`,
      });
    if (r.command && (r.model || r.args || r.base_url || r.key_credential))
      ctx.addIssue({
        code: "custom",
        message: "runner.model, args, base_url and key_credential apply to runner.agent only",
      });
  });

export const NextStepSchema = z
  .object({
    to: name,
    kind: z.string().min(1),
    /** Appended to the finished entry's id to make the follow-up's id (e.g. "-review"). */
    id_suffix: z.string().min(1),
  })
  .strict();

/**
 * A route of a router role (Hana in the roles contract §3.6): where the follow-up of an entry of
 * kind `on` goes — for `hana_task`, the one whose `target` is the entry's `payload.target`. The
 * role does not choose: the entry's kind and target and this table do.
 */
export const RouteSchema = NextStepSchema.extend({
  /** The kind of the picked entry this route applies to. */
  on: z.string().min(1),
  /** When set, the route applies only to entries whose `payload.target` is this. */
  target: z.string().min(1).optional(),
}).strict();

/** What one model's tokens cost, in the price table's currency per million tokens. */
export const PriceSchema = z
  .object({
    input_per_mtok: z.number().nonnegative(),
    output_per_mtok: z.number().nonnegative(),
    /** Cached input tokens; default the input price. */
    cached_input_per_mtok: z.number().nonnegative().optional(),
  })
  .strict();

/** A run's limits: the run fails, its sprite stopped, once its reported usage goes past either. */
export const BudgetSchema = z
  .object({
    max_tokens: z.number().int().positive().optional(),
    /** In the price table's currency; needs a price for every model the run uses. */
    max_cost: z.number().positive().optional(),
  })
  .strict()
  .refine((b) => b.max_tokens !== undefined || b.max_cost !== undefined, {
    message: "give max_tokens, max_cost or both",
  });

export const RoleSchema = z
  .object({
    name,
    /** Pick rule: this role takes open entries addressed to it whose kind is listed here. */
    allowed_kinds: z.array(z.string().min(1)).min(1),
    runner: RunnerSchema.optional(),
    /** The entry the lane posts when this role's run succeeds. */
    next: NextStepSchema.optional(),
    /** Per picked kind (and target), the entry posted when this role's run succeeds; before `next`. */
    routes: z.array(RouteSchema).optional(),
    /**
     * Per outcome the run's COMPLETED names (`outcome`, e.g. a reviewer's `changes_requested`), the
     * entry posted instead of `next`/`routes`: work sent back carries the review with it.
     */
    on_outcome: z
      .record(
        z.string().regex(/^[a-z][a-z0-9_]*$/, "an outcome is a lowercase name, e.g. changes_requested"),
        NextStepSchema,
      )
      .optional(),
    /** Secrets this role may receive through FETCH_CREDENTIAL. */
    credentials: z.array(z.string().min(1)).default([]),
    /** Limits of each run of this role (`pmagent run --max-tokens/--max-cost` overrides them for one run). */
    budget: BudgetSchema.optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.on_outcome && !r.next && !r.routes)
      ctx.addIssue({
        code: "custom",
        path: ["on_outcome"],
        message: "on_outcome routes some outcomes elsewhere: give the role a next (or routes) for the others",
      });
    r.routes?.forEach((route, i) => {
      if (!r.allowed_kinds.includes(route.on))
        ctx.addIssue({
          code: "custom",
          path: ["routes", i, "on"],
          message: `"${route.on}" is not one of the role's allowed_kinds (${r.allowed_kinds.join(", ")})`,
        });
    });
  });

export const LaneSchema = z
  .object({
    layer: name,
    name,
    roles: z.array(RoleSchema).min(1),
    /** Paths (prefixes) the lane may edit; anything else is refused. */
    allowed_paths: z.array(z.string().min(1)).default(["STATE/", "docs/", "reports/"]),
    /** Where the lane's STATE document lives, relative to the repository. */
    state_file: z.string().min(1).default("STATE/current_state.md"),
    /** The gate of the lane's model-backed review (Sho with `model` configured); hard_gate when absent. */
    review_level: z.enum(["feedback", "soft_gate", "hard_gate"]).optional(),
    /** The role whose approving run (an outcome on_outcome does not route elsewhere) merges the cycle's pull request. */
    merge_pull_request: name.optional(),
    /**
     * When the cycle's pull request opens: with the cycle's first change (`first_change`), after
     * a run of the named role, or `never`. Each later role's commit updates it.
     */
    open_pull_request: z.string().min(1).default("first_change"),
  })
  .strict()
  .superRefine((lane, ctx) => {
    const when = lane.open_pull_request;
    if (when !== "first_change" && when !== "never" && !lane.roles.some((r) => r.name === when)) {
      ctx.addIssue({
        code: "custom",
        path: ["open_pull_request"],
        message: `"${when}" is neither first_change, never nor a role of the lane (${lane.roles.map((r) => r.name).join(", ")})`,
      });
    }
    const merger = lane.merge_pull_request;
    if (merger !== undefined && !lane.roles.some((r) => r.name === merger)) {
      ctx.addIssue({
        code: "custom",
        path: ["merge_pull_request"],
        message: `"${merger}" is not a role of the lane (${lane.roles.map((r) => r.name).join(", ")})`,
      });
    }
  });

export const StorageSchema = z
  .object({
    driver: z.enum(["sqlite", "postgres"]).default("sqlite"),
    path: z.string().min(1).default(".pmagent/pmagent.db"),
    url: z.string().optional(),
    schema: z.string().optional(),
  })
  .strict();

export const GithubSchema = z
  .object({
    /** OWNER/NAME of the repository pull requests and comments go to. */
    repo: z
      .string()
      .regex(/^[^/\s]+\/[^/\s]+$/, "expected OWNER/NAME")
      .optional(),
    /** The board issue whose comments hold the blackboard. */
    board_issue: z.number().int().positive().optional(),
    /** Environment variable holding the token (never the token itself). */
    token_env: z.string().default("GITHUB_TOKEN"),
    /** API base URL (GitHub Enterprise, or a local server in tests). */
    api_url: z.string().url().default("https://api.github.com"),
  })
  .strict();

/**
 * The request settings the prompt contract's origin sends with every Responses request; on by
 * default. `enabled: false` sends none of them (a server that refuses them, a model without
 * reasoning); each one can be changed on its own.
 */
export const ModelRequestSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** Server-sent events (`stream: true`). */
    stream: z.boolean().default(true),
    /** `store`: false keeps the response off the provider's storage (then `include` asks for the encrypted reasoning). */
    store: z.boolean().default(false),
    /**
     * Where `reasoning`, `include` and `text.verbosity` go: `auto` to the models that take them (the
     * gpt-5 family and the o-series; others, such as the default gpt-4.1-mini, refuse a request with
     * them), `on` to every model, `off` to none.
     */
    reasoning: z.enum(["auto", "on", "off"]).default("auto"),
    reasoning_effort: z.enum(["minimal", "low", "medium", "high"]).default("medium"),
    reasoning_summary: z.enum(["auto", "concise", "detailed"]).default("auto"),
    /** `text.verbosity`. */
    verbosity: z.enum(["low", "medium", "high"]).default("medium"),
    /** Send a `prompt_cache_key` stable per lane and role, so that the role's fixed prefix is cached. */
    prompt_cache_key: z.boolean().default(true),
  })
  .strict();
export type ModelRequest = z.output<typeof ModelRequestSchema>;

export const ModelSchema = z
  .object({
    model: z.string().min(1).default("gpt-4.1-mini"),
    base_url: z.string().url().optional(),
    api_key_env: z.string().default("OPENAI_API_KEY"),
    timeout_ms: z.number().int().positive().default(120_000),
    max_retries: z.number().int().min(0).max(10).default(3),
    request: ModelRequestSchema.prefault({}),
  })
  .strict();

export const ForgeSchema = z
  .object({
    /** Bare repository the local forge pushes branches to (relative to the project root). */
    bare_repo: z.string().min(1).default(".pmagent/forge.git"),
    /**
     * The forge every machine of the team reaches (a git URL: git://, http(s)://, ssh, or a path):
     * cycle branches, merges and pull request bases live there; `bare_repo` is then each machine's
     * mirror of it. Unset: the forge is `bare_repo` alone, on one machine.
     */
    remote: z
      .string()
      .min(1)
      .refine(
        (v) => !v.startsWith("-") && !/[\s\0]/.test(v),
        "a git URL or path, without spaces, not starting with '-'",
      )
      .optional(),
  })
  .strict();

export const OaSchema = z
  .object({
    /** Directory holding the kernel surfaces, relative to the project root. */
    surfaces_dir: z.string().min(1).default("share"),
    /** Guards `oa.guard.run(name)` may run: argv and timeout. */
    guards: z
      .record(
        z.string(),
        z
          .object({
            command: z.array(z.string().min(1)).min(1),
            timeout_ms: z.number().int().positive().default(30_000),
          })
          .strict(),
      )
      .default({}),
    /** Ask SafeOPSDecision before each run when surfaces exist. */
    gate: z.boolean().default(true),
    /** The project's phase, written by `pmagent oa init` into the starting kernel surfaces. */
    phase: z.union([z.string().min(1), z.number()]).optional(),
    /** Checks `pmagent oa init` runs for its reality summary (default: package.json's test script). */
    checks: z
      .record(
        z.string().min(1),
        z
          .object({
            command: z.array(z.string().min(1)).min(1),
            timeout_ms: z.number().int().positive().default(600_000),
          })
          .strict(),
      )
      .optional(),
  })
  .strict();

export const SecretsSchema = z
  .object({
    /** A JSON file of name → value (relative to the project root); environment variables are read too. */
    file: z.string().optional(),
  })
  .strict();

export const NotifySchema = z
  .object({
    webhook_url: z.string().url().optional(),
  })
  .strict();

/** Milliseconds, at most a day (Node's socket timers overflow past 2^31 - 1 ms). */
const timeoutMs = z.number().int().positive().max(86_400_000);

export const ServerSchema = z
  .object({
    /** Bearer token → actor. Prefer PMAGENT_TOKENS so tokens stay out of the repository. */
    tokens: z.record(z.string().min(16), name).default({}),
    /**
     * Host names (optionally NAME:PORT) this server answers to besides localhost, 127.0.0.1 and
     * [::1]: without tokens, any other Host or Origin is refused (DNS rebinding).
     */
    allowed_hosts: z
      .array(
        z
          .string()
          .regex(
            /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d{1,5})?$/,
            "expected a host name with an optional port, e.g. pmagent.lan or pmagent.lan:7420",
          ),
      )
      .default([]),
    /** Milliseconds a client has to send a request's headers; a slower one gets 408 and is cut off. */
    headers_timeout_ms: timeoutMs.default(10_000),
    /** Milliseconds a client has to send a whole request, body included (a live stream's response is not bounded). */
    request_timeout_ms: timeoutMs.default(30_000),
    /** Milliseconds an idle keep-alive connection stays open between requests. */
    keep_alive_timeout_ms: timeoutMs.default(5_000),
    /** Connections served at once (each holds a file descriptor); more are closed at once until some end. */
    max_connections: z.number().int().positive().default(512),
  })
  .strict()
  .refine((s) => s.headers_timeout_ms <= s.request_timeout_ms, {
    message: "must not exceed request_timeout_ms (the headers are part of the request)",
    path: ["headers_timeout_ms"],
  });

export const ConfigSchema = z
  .object({
    $schema: z.string().optional(),
    project_id: name,
    humans: z.array(name).min(1).default(["Human"]),
    /** IANA time zone (e.g. Asia/Tokyo) Kai counts a window's days in; absent: the zone of as_of, else UTC. */
    timezone: z
      .string()
      .refine(isTimeZoneName, {
        error: (iss) =>
          `expected an IANA time zone name (e.g. Asia/Tokyo, Europe/Berlin, UTC), got ${JSON.stringify(iss.input)}`,
      })
      .optional(),
    lanes: z.array(LaneSchema).min(1),
    storage: StorageSchema.default({ driver: "sqlite", path: ".pmagent/pmagent.db" }),
    github: GithubSchema.optional(),
    model: ModelSchema.optional(),
    forge: ForgeSchema.default({ bare_repo: ".pmagent/forge.git" }),
    oa: OaSchema.default({ surfaces_dir: "share", guards: {}, gate: true }),
    secrets: SecretsSchema.default({}),
    notify: NotifySchema.default({}),
    server: ServerSchema.prefault({}),
    /** Model name → its prices per million tokens ("*": any model not named), for the cost of runs and cost budgets. */
    prices: z.record(z.string().min(1), PriceSchema).default({}),
    /**
     * Run sprites in a bubblewrap sandbox: "required" refuses to start a run without it, "auto"
     * uses it where installed (with a loud warning where not), "off" runs them unsandboxed.
     */
    sandbox: z.enum(["required", "auto", "off"]).default("auto"),
    /**
     * The sandbox's network: "host" shares the machine's (a sprite reaches model APIs, and loopback
     * services too); "none" gives it a network namespace of its own with nothing in it, so it
     * reaches neither the internet nor this machine's services (a PostgreSQL store, `pmagent serve`).
     */
    sandbox_network: z.enum(["host", "none"]).default("host"),
  })
  .strict()
  .superRefine((c, ctx) => {
    // A cost budget with no price to count it by would never stop anything.
    if (Object.keys(c.prices).length > 0) return;
    c.lanes.forEach((lane, l) =>
      lane.roles.forEach((role, r) => {
        if (role.budget?.max_cost !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["lanes", l, "roles", r, "budget", "max_cost"],
            message: `role ${role.name} has a cost budget but the config has no prices: add "prices": { "<model>": { "input_per_mtok": …, "output_per_mtok": … } }`,
          });
        }
      }),
    );
  });

export type Config = z.output<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
export type LaneConfig = z.output<typeof LaneSchema>;
export type RouteConfig = z.output<typeof RouteSchema>;
export type NextStep = z.output<typeof NextStepSchema>;
export type RoleConfig = z.output<typeof RoleSchema>;
export type RunnerConfig = z.output<typeof RunnerSchema>;
export type PriceConfig = z.output<typeof PriceSchema>;
export type BudgetConfig = z.output<typeof BudgetSchema>;
