// After tsc: the CLI as users run it, bundled; file modes; the console's static files.
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const dist = (p) => fileURLToPath(new URL(`../dist/${p}`, import.meta.url));

// The bin (dist/bin/main.js): tsc's output bundled, split at each dynamic import so a command
// still loads only its own code. Node 20's ES-module loader costs about half a millisecond per
// file (bench/cli measures what that comes to); a chunk replaces many. The worker threads are
// entries of their own, beside the chunk that starts them (core/thread.ts finds them there).
// dist/bin sits at the same depth as dist/<module>/, so `../../package.json`, `../console/` and
// `../../templates/` reached from any chunk name the same files as from tsc's output.
rmSync(dist("bin"), { recursive: true, force: true });
await build({
  entryPoints: {
    main: dist("cli/main.js"),
    "sqlite-checkpoint-thread": dist("store/sqlite-checkpoint-thread.js"),
    "outbox-worker": dist("lattice/ingest/outbox-worker.js"),
  },
  outdir: dist("bin"),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  logLevel: "warning",
});
// esbuild cannot see the threads `startThread(name, import.meta.url)` starts beside the caller:
// a thread without an entry above would fail only when the bin starts it, so the build fails now.
for (const chunk of readdirSync(dist("bin")))
  for (const [, name] of readFileSync(dist(`bin/${chunk}`), "utf8").matchAll(/startThread\("([\w-]+)"/g))
    if (!existsSync(dist(`bin/${name}.js`)))
      throw new Error(`dist/bin/${chunk} starts the thread "${name}": add it to the entries in scripts/postbuild.mjs`);
// tsc and esbuild do not keep file modes.
for (const bin of ["cli/main.js", "bin/main.js"]) chmodSync(dist(bin), 0o755);
// The console's static files beside its compiled app.js (tsc only emits .js).
for (const f of ["index.html", "style.css"])
  copyFileSync(new URL(`../src/console/${f}`, import.meta.url), dist(`console/${f}`));
