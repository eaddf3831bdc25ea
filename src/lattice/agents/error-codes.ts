/** The error codes src/lattice/agents raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    agent_home_missing: "usage";
    agent_key_missing: "usage";
    agent_key_not_allowed: "refused";
    agent_unsupported: "usage"; // also raised by cli
    unknown_agent: "usage";
  }
}

export {};
