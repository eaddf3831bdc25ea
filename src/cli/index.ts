export { buildProgram, main, reportError, EXIT_CODES_HELP } from "./program.js";
