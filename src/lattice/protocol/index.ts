// The protocol sub-module of lattice: its public surface (with lattice/wire, its zod-free core).
export * from "../wire/index.js";
export * from "./events.js";
export * from "./identity.js";
export * from "./inputs.js";
export * from "./lines.js";
export * from "./outbox.js";
export * from "./parser.js";
export * from "./resume.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
