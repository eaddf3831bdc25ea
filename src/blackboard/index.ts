export { EntrySchema, EntryInputSchema, StatusSchema, TargetDocsSchema, TargetDocObjectSchema } from "./schema.js";
export * from "./light/index.js";
export * from "./github/index.js";
