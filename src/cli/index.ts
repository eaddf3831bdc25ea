export { buildProgram, main, reportError, EXIT_CODES_HELP } from "./program.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
