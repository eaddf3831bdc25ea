// The ingest sub-module of lattice: its public surface.
export * from "./ingestor.js";
export * from "./outbox-reader.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
