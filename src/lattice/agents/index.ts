// The agents sub-module of lattice: coding-agent CLIs (Codex, Claude Code, Gemini CLI) as sprites.
export * from "./agents.js";
export * from "./choices.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
