// Make the CLI executable after tsc (tsc does not keep file modes).
import { chmodSync, copyFileSync } from "node:fs";
chmodSync(new URL("../dist/cli/main.js", import.meta.url), 0o755);
// The console's static files beside its compiled app.js (tsc only emits .js).
for (const f of ["index.html", "style.css"])
  copyFileSync(new URL(`../src/console/${f}`, import.meta.url), new URL(`../dist/console/${f}`, import.meta.url));
