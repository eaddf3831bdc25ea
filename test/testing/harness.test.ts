import { describe, expect, it } from "vitest";
import OpenAI from "openai";
// Through the package's own subpath, as a user imports it (the build: `npm test` builds first).
import { runSprite, startFakeOpenAI } from "pmagent/testing";

/** A shell sprite: what a user writes first, speaking Lattice through `pmagent emit`. */
const sh = (script: string) => ["sh", "-c", script];

describe("pmagent/testing: a user's sprite run in a throwaway project", () => {
  it("runs the sprite on the entry, in a git workspace of the given files, and returns its record and events", async () => {
    const h = await runSprite({
      files: { "docs/guide.md": "# Guide\n" },
      payload: { summary: "Count the guide's lines" },
      command: sh(
        `n=$(wc -l < docs/guide.md) && pmagent emit INFO --message "lines: $n" && pmagent emit COMPLETED --status success --summary "counted"`,
      ),
    });
    try {
      expect(h.run.state, h.run.reason ?? "").toBe("succeeded");
      expect(h.events.map((e) => e.event_type)).toEqual(["INFO", "COMPLETED"]);
      expect(h.events[0]!.event.payload).toEqual({ message: "lines: 1" });
    } finally {
      await h.close();
    }
  });

  it("resumes a WAITING sprite with inputs, which it reads with pmagent resume-info", async () => {
    const h = await runSprite({
      command: sh(
        `if [ -f .lattice/resume.json ]; then pmagent emit COMPLETED --status success --summary "$(pmagent resume-info | tr -d '\\n ')"; else chk=$(pmagent checkpoint create) && pmagent emit WAITING --reason "which colour?" --checkpoint "$chk" --expect colour=string; fi`,
      ),
    });
    try {
      expect(h.run.state).toBe("waiting");
      expect(h.run.waiting).toMatchObject({ reason: "which colour?", expected_inputs: { colour: "string" } });
      const done = await h.resume({ colour: "blue" });
      expect(done.run.state, done.run.reason ?? "").toBe("succeeded");
      expect(String((done.events.at(-1)!.event.payload as { summary: string }).summary)).toContain('"colour":"blue"');
    } finally {
      await h.close();
    }
  });

  it("says what is wrong with an empty command, and reports a sprite that speaks no protocol and exits non-zero as failed", async () => {
    await expect(runSprite({ command: [] })).rejects.toThrow(
      'runSprite needs a command: the sprite\'s argv, e.g. ["node", "sprite.mjs"]',
    );
    const h = await runSprite({ command: sh("echo just text; exit 3") });
    try {
      expect(h.run.state).toBe("failed");
      expect(h.run.reason).toMatch(
        /^the sprite exited with code 3 and sent no Lattice events, so its exit status decides/,
      );
    } finally {
      await h.close();
    }
  });

  it("ships the scripted Responses server: the real openai SDK talks to it", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.reply({ text: "scripted answer" });
      const client = new OpenAI({ apiKey: "test-key", baseURL: fake.baseURL });
      const r = await client.responses.create({ model: "gpt-test", input: "hello" });
      expect(r.output_text).toBe("scripted answer");
      expect(fake.requests[0]!.body).toMatchObject({ model: "gpt-test", input: "hello" });
    } finally {
      await fake.close();
    }
  });

  it("tells a test when a request has arrived, even one whose answer is held", async () => {
    const fake = await startFakeOpenAI();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    try {
      fake.reply({ until: held, then: { text: "after the hold" } });
      const client = new OpenAI({ apiKey: "test-key", baseURL: fake.baseURL, maxRetries: 0 });
      const answer = client.responses.create({ model: "gpt-test", input: "hello" });
      await fake.requested(1);
      expect(fake.requests).toHaveLength(1);
      let answered = false;
      void answer.then(() => (answered = true));
      await fake.requested(1); // already there: settles at once
      expect(answered).toBe(false);
      release();
      expect((await answer).output_text).toBe("after the hold");
    } finally {
      release();
      await fake.close();
    }
  });
});
