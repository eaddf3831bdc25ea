export { EntrySchema, EntryInputSchema, StatusSchema } from "./schema.js";
export * from "./light/index.js";
export * from "./sql/index.js";
export * from "./github/index.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
