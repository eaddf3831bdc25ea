import type { Worker } from "node:worker_threads";

/**
 * Start a worker thread whose entry is the module `name` beside the calling module (`here` is its
 * `import.meta.url`): `name.js` when running from the build, `name.ts` when running from the
 * TypeScript sources (the tests), loaded then through tsx as the tests load everything else.
 * The thread does not keep the process alive; callers `ref()` it while they wait for an answer.
 * `youngGenerationMb` sizes the thread's young generation (V8's default for a thread is small):
 * a thread that makes much short-lived garbage spends less on collecting it in a larger one.
 */
export function startThread(
  name: string,
  here: string,
  workerData?: unknown,
  options: { youngGenerationMb?: number } = {},
): Worker {
  const fromSources = new URL(here).pathname.endsWith(".ts");
  const entry = new URL(`./${name}${fromSources ? ".ts" : ".js"}`, here);
  const settings = {
    workerData,
    ...(options.youngGenerationMb ? { resourceLimits: { maxYoungGenerationSizeMb: options.youngGenerationMb } } : {}),
  };
  // node:worker_threads is loaded here, not at import: a CLI command that starts no thread would
  // pay for it at start-up.
  const { Worker } = process.getBuiltinModule("node:worker_threads");
  const worker = fromSources
    ? new Worker(
        `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`,
        { eval: true, ...settings },
      )
    : new Worker(entry, settings);
  worker.unref();
  return worker;
}
