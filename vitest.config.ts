import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // 2-core machines: more forks only add contention for the PostgreSQL and child-process tests.
    maxWorkers: 2,
    reporters: ["default"],
  },
});
