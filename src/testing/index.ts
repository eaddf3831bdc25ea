// `pmagent/testing`: what a user's own tests use to run their sprites and agent set-ups without a
// model API or a real project: the sprite harness and the scripted model servers pmagent's tests use.
export {
  runSprite,
  HARNESS_ROLE,
  HARNESS_KIND,
  type SpriteHarness,
  type SpriteHarnessOptions,
  type SpriteRun,
} from "./sprite-harness.js";
export * from "./scripted-openai.js";
export * from "./scripted-anthropic.js";
export * from "./scripted-gemini.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
