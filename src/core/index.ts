export * from "./errors.js";
export * from "./json.js";
export * from "./time.js";
export * from "./redact.js";
export * from "./fs.js";
export * from "./log.js";
export * from "./zod.js";
export * from "./thread.js";
