// Make the CLI executable after tsc (tsc does not keep file modes).
import { chmodSync } from "node:fs";
chmodSync(new URL("../dist/cli/main.js", import.meta.url), 0o755);
