/** The outbox decoder thread (see outbox-reader.ts): reads and decodes outbox batches on request. */
import { parentPort } from "node:worker_threads";
import { readOutbox } from "./outbox.js";
import { BatchPacker, type DecodeRequest, type DecodeResponse } from "./outbox-reader.js";

const port = parentPort;
if (!port) throw new Error("outbox-worker.js runs as a worker thread of the supervisor");
port.on("message", (req: DecodeRequest) => {
  let res: DecodeResponse;
  try {
    const packer = new BatchPacker();
    res = { id: req.id, ok: true, batch: packer.finish(readOutbox(req.path, req.from, { ...req.options, onItem: packer.add })) };
  } catch (err) {
    res = { id: req.id, ok: false, message: (err as Error).message };
  }
  port.postMessage(res);
});
