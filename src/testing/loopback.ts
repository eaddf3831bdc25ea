/** What the scripted model servers share: a request's whole body, and a server on 127.0.0.1 that closes even with replies held open. */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The request's body as text (the servers parse it as their service does). */
export async function bodyText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Listen on a free port of 127.0.0.1; `close` ends the responses held open (`hanging`: stalled
 * streams, held replies) and every connection, so a test's teardown never waits on them.
 */
export async function listenLoopback(
  server: Server,
  hanging: Set<ServerResponse>,
): Promise<{ origin: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
