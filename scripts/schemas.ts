/**
 * Generate the JSON Schemas in schemas/ from the zod schemas (never hand-written).
 * `npm run schemas` writes them; `test/schemas.test.ts` fails when they are out of date.
 */
import { writeFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import { toJsonSchema } from "../src/core/index.js";
import { ConfigSchema } from "../src/config/index.js";
import { OUTPUT_PRESETS } from "../src/prompt/index.js";
import { OA_PUBLISHED_SCHEMAS } from "../src/oa/index.js";
import { LatticeEventSchema, ResumeSchema } from "../src/lattice/index.js";
import { kaiSchemas } from "../src/kai/index.js";
import { LANE_PUBLISHED_SCHEMAS } from "../src/lane/index.js";
import { SyncReportSchema } from "../src/blackboard/index.js";

/** file name (without .schema.json) → zod schema and which side (input accepts defaults). */
export const published: Array<{ name: string; schema: z.ZodType; io: "input" | "output" }> = [
  { name: "config", schema: ConfigSchema, io: "input" },
  ...Object.entries(OUTPUT_PRESETS).map(([role, schema]) => ({
    name: `prompt-output-${role}`,
    schema,
    io: "output" as const,
  })),
  ...OA_PUBLISHED_SCHEMAS,
  { name: "lattice-event", schema: LatticeEventSchema, io: "input" },
  { name: "lattice-resume", schema: ResumeSchema, io: "input" },
  ...(await kaiSchemas()).KAI_PUBLISHED_SCHEMAS,
  ...LANE_PUBLISHED_SCHEMAS,
  { name: "bb-sync-report", schema: SyncReportSchema, io: "output" },
];

export function render(entry: (typeof published)[number]): string {
  const json = {
    $id: `https://pmagent.dev/schemas/${entry.name}.schema.json`,
    title: entry.name,
    ...toJsonSchema(entry.schema, { io: entry.io }),
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = fileURLToPath(new URL("../schemas/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  for (const entry of published) writeFileSync(`${dir}${entry.name}.schema.json`, render(entry));
  console.log(`wrote ${published.length} schemas to ${dir}`);
}
