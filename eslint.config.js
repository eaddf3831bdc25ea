import js from "@eslint/js";
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";

/*
 * The layering, lowest first (ARCHITECTURE.md draws it). A module may import only modules of a
 * lower layer, and only through their index.ts; inside lattice, a sub-module may import only the
 * sub-modules below it. import-x/no-cycle catches what the layers do not: a circle of files.
 */
const LAYERS = [
  ["core"],
  ["config", "store"],
  ["forge"],
  ["blackboard"],
  ["lattice"],
  ["prompt"],
  ["oa"],
  ["kai"],
  ["app"],
  ["lane", "server", "console", "testing"],
  ["cli"],
];
const LATTICE_LAYERS = [
  ["migrations"],
  ["wire"],
  ["protocol"],
  ["runs"],
  ["sandbox"],
  ["ingest", "checkpoint"],
  ["sprite"],
  ["actions", "environment", "agents"],
  ["supervisor"],
];
/*
 * Second concerns as sub-folders of a module, layered the same way (lowest first). A sub-module is
 * entered through its index.ts, by its parent's files as by everyone else; it may use its parent's
 * core files (blackboard/github builds on Blackboard), which never import it back (no-cycle).
 */
const SUB_MODULES = {
  blackboard: [["github"]],
  kai: [["evidence"], ["reports"]],
  server: [["mcp"]],
  lane: [["doc-update"]],
};

// Leaving the folder is allowed only to another folder's index.js (the sprite SDK is a
// sub-module other modules may name: it is the package's `pmagent/sprite`; so is lattice/wire,
// the zod-free protocol core `pmagent emit` loads without the rest of lattice; lattice/runs, the
// run records `pmagent runs list` and `kai status` read without the supervisor's code, and
// lattice/actions, lattice/environment and lattice/sandbox, the action and proposal stores a read
// opens and the sandbox the composition root wires, likewise without the supervisor; app/project,
// the composition root's light entry the CLI opens a project with, without the supervisor or OA;
// config/light and blackboard/light, the config and the board without their zod schemas (and the
// board without its GitHub side) for commands that only read them; blackboard/sql, the board's SQL
// conditions the runs' fencing embeds, without the board;
// and each module's migrations/, which the composition root gathers without loading the modules).
const THROUGH_INDEX = {
  regex:
    "^(\\.\\./)+(?!\\.\\./)(?=[^/]+/)(?![^/.][^/]*/index\\.js$)(?!(lattice/(sprite|wire|runs|actions|environment|sandbox)|app/project|config/light|blackboard/(light|sql)|[^/.][^/]*/migrations)/index\\.js$)",
  message: "Modules (and lattice's sub-modules) talk through each other's index.ts, never their internals.",
};

// CommonJS packages every command loads are required (src/cli/commander.ts, src/store/better-sqlite3.ts):
// node's ES-module wrapper of one costs each command milliseconds. Their types may be imported.
const REQUIRED_CJS = ["commander", "better-sqlite3"].map((name) => ({
  name,
  allowTypeImports: true,
  message: `${name} is required (createRequire), not imported: ${name === "commander" ? "take its classes from src/cli/commander.ts" : "take the driver from src/store/better-sqlite3.ts"}.`,
}));

/** Patterns forbidding the folders above `layer` (given as `../name/` relative prefixes). */
function above(layers, index, prefix, message) {
  const higher = layers.slice(index + 1).flat();
  return higher.length === 0 ? [] : [{ regex: `^${prefix}(${higher.join("|")})/`, message }];
}

/** The module-level patterns for src/NAME (and any folder inside it). */
function modulePatterns(name, i) {
  return [
    THROUGH_INDEX,
    ...above(
      LAYERS,
      i,
      "(\\.\\./)+",
      `src/${name} is below ${LAYERS.slice(i + 1)
        .flat()
        .join(", ")}: a lower module never imports a higher one (wire them in src/app).`,
    ),
  ];
}

/** A parent's files reach a sub-module only through its index.ts. */
function intoSubModules(name) {
  const subs = (SUB_MODULES[name] ?? []).flat();
  return subs.length === 0
    ? []
    : [
        {
          regex: `^\\./(${subs.join("|")})/(?!index\\.js$)`,
          message: `src/${name}'s sub-modules (${subs.join(", ")}) are entered through their index.ts, never their internals.`,
        },
      ];
}

const layerRules = LAYERS.flatMap((names, i) =>
  names.map((name) => ({
    files: [`src/${name}/*.ts`, `src/${name}/**/*.ts`],
    ignores:
      name === "lattice"
        ? ["src/lattice/*/**"]
        : (SUB_MODULES[name] ?? []).flat().map((sub) => `src/${name}/${sub}/**`),
    rules: {
      "no-restricted-imports": [
        "error",
        { paths: REQUIRED_CJS, patterns: [...modulePatterns(name, i), ...intoSubModules(name)] },
      ],
    },
  })),
);

const subModuleRules = Object.entries(SUB_MODULES).flatMap(([name, subLayers]) =>
  subLayers.flatMap((subs, j) =>
    subs.map((sub) => ({
      files: [`src/${name}/${sub}/**/*.ts`],
      rules: {
        "no-restricted-imports": [
          "error",
          {
            paths: REQUIRED_CJS,
            patterns: [
              ...modulePatterns(
                name,
                LAYERS.findIndex((l) => l.includes(name)),
              ),
              ...above(
                subLayers,
                j,
                "\\.\\./",
                `${name}/${sub} is below ${subLayers
                  .slice(j + 1)
                  .flat()
                  .join(", ")} in the ${name} module.`,
              ),
            ],
          },
        ],
      },
    })),
  ),
);

const latticeRules = LATTICE_LAYERS.flatMap((names, i) =>
  names.map((name) => ({
    files: [`src/lattice/${name}/**/*.ts`],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: REQUIRED_CJS,
          patterns: [
            THROUGH_INDEX,
            ...above(
              LATTICE_LAYERS,
              i,
              "\\.\\./",
              `lattice/${name} is below ${LATTICE_LAYERS.slice(i + 1)
                .flat()
                .join(", ")} in the lattice module.`,
            ),
            ...above(
              LAYERS,
              LAYERS.findIndex((l) => l.includes("lattice")),
              "\\.\\./\\.\\./",
              "lattice is below prompt, oa, kai and the composition root: it knows its hooks as interfaces only.",
            ),
          ],
        },
      ],
    },
  })),
);

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "test-artifacts/**", "src/console/assets/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        fetch: "readonly",
        AbortController: "readonly",
        TextEncoder: "readonly",
        TextDecoder: "readonly",
        structuredClone: "readonly",
        setImmediate: "readonly",
        AbortSignal: "readonly",
        Response: "readonly",
        Request: "readonly",
        Headers: "readonly",
        document: "readonly",
        window: "readonly",
        EventSource: "readonly",
        performance: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-imports": ["error", { patterns: [THROUGH_INDEX] }],
    },
  },
  {
    // More than five parameters: take an options object (issue 37), so a call names what it passes.
    files: ["src/**/*.ts"],
    rules: { "max-params": ["error", 5] },
  },
  ...layerRules,
  ...subModuleRules,
  ...latticeRules,
  {
    files: ["src/**/*.ts"],
    plugins: { "import-x": importX },
    settings: {
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "tsconfig.json" })],
      // no-cycle reads the imported files itself, and needs to be told how to parse TypeScript.
      "import-x/parsers": { "@typescript-eslint/parser": [".ts"] },
      "import-x/extensions": [".ts", ".js"],
    },
    rules: { "import-x/no-cycle": ["error", { ignoreExternal: true }] },
  },
  {
    files: ["test/**/*.ts", "bench/**", "examples/**", "scripts/**"],
    rules: { "no-restricted-imports": "off" },
  },
);
