import { describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { resumePath } from "../../../src/lattice/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { testProject } from "../helpers.js";

const kinds = await availableStoreKinds();
const SECRET = "resume-held-credential-91c2";

describe.each(kinds)("resume.json holding a credential, on $name", (kind) => {
  it(
    "is removed once the sprite has read it (its first event after the resume), not left behind",
    { timeout: 60_000 },
    async () => {
      const ts = await kind.open();
      const tp = testProject(ts);
      try {
        const sup = tp.supervisor();
        const waiting = await sup.startRun({
          role: "Builder",
          command: tp.sprite("cred", {
            steps: [{ waiting: { reason: "need token", expected_inputs: { token: "string" } } }],
            // The scenario sprite reads resume.json and emits its INFO acknowledgement first; then
            // it waits (bounded) for the file to go, and says whether it went.
            on_resume: [
              {
                sh: "i=0; while [ -f .lattice/resume.json ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; [ -f .lattice/resume.json ] && echo resume-still-there || echo resume-gone",
              },
              { emit: "COMPLETED", payload: { status: "success" } },
            ],
          }),
        });
        expect(waiting.state).toBe("waiting");
        const r = await sup.resumeRun(waiting.id, { inputs: {}, secretInputs: { token: SECRET } });
        const done = await r.finished;
        expect(done.state, done.reason ?? "").toBe("succeeded");
        // The sprite got the credential (its acknowledgement shows the inputs, redacted) …
        const ack = (await sup.runs.events(done.id, { type: "INFO" }))[0]!.event.payload as {
          metadata: { inputs: Record<string, string> };
        };
        expect(ack.metadata.inputs).toEqual({ token: "[REDACTED]" });
        // … and the file was gone while it still ran, and after.
        expect((await sup.runs.logs(done.id)).map((l) => l.text)).toContain("resume-gone");
        expect(existsSync(resumePath(done.workspace))).toBe(false);
      } finally {
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );
});
