#!/usr/bin/env node
// `pmagent … | head` closes the pipe early: that is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
}

const argv = process.argv.slice(2);
// `pmagent emit` runs once per event in shell sprites: its common form is served before commander
// and the command groups load (emit-fast.ts); whatever it does not handle goes the usual way.
const fast = argv[0] === "emit" ? await (await import("./emit-fast.js")).emitFast(argv.slice(1)) : undefined;
if (fast !== undefined) process.exitCode = fast;
else {
  const { main } = await import("./program.js");
  process.exitCode = await main(argv);
}
