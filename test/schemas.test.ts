import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { published, render } from "../scripts/schemas.js";

describe("published JSON Schemas", () => {
  it.each(published.map((p) => [p.name, p] as const))(
    "schemas/%s.schema.json is generated from its zod schema and up to date",
    (name, entry) => {
      const onDisk = readFileSync(new URL(`../schemas/${name}.schema.json`, import.meta.url), "utf8");
      expect(onDisk, "run `npm run schemas` to regenerate").toBe(render(entry));
    },
  );
});
