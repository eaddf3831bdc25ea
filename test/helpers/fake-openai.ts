/** Moved to src/testing (the `pmagent/testing` subpath): kept so test files import it from here as before. */
export * from "../../src/testing/scripted-openai.js";
