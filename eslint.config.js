import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "test-artifacts/**", "src/console/assets/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", fetch: "readonly", AbortController: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", structuredClone: "readonly", setImmediate: "readonly", AbortSignal: "readonly", Response: "readonly", Request: "readonly", Headers: "readonly", document: "readonly", window: "readonly", EventSource: "readonly", performance: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["../*/*", "!../*/index.js", "!../lattice/sprite.js"],
              message: "Modules talk through each other's index.ts (and the sprite SDK, pmagent/sprite), never their internals.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**", "examples/**", "scripts/**"],
    rules: { "no-restricted-imports": "off" },
  },
);
