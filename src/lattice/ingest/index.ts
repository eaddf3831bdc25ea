// The ingest sub-module of lattice: its public surface.
export * from "./ingestor.js";
export * from "./outbox-reader.js";
