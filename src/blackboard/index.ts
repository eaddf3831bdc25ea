export { EntrySchema, EntryInputSchema, StatusSchema } from "./schema.js";
export * from "./light/index.js";
export * from "./github/index.js";
