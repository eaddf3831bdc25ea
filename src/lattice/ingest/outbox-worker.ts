/** The outbox decoder thread (see outbox-reader.ts): reads and decodes outbox batches on request. */
import { parentPort } from "node:worker_threads";
import { answerDecode, type DecodeRequest } from "./outbox-reader.js";

const port = parentPort;
if (!port) throw new Error("outbox-worker.js runs as a worker thread of the supervisor");
/** Buffers of released batches, to fill again. */
const spares: ArrayBuffer[] = [];
port.on("message", (req: DecodeRequest) => {
  const { response, transfer } = answerDecode(req, spares);
  port.postMessage(response, transfer);
});
