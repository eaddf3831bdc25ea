/**
 * One fake OpenAI server (the scripted server of `src/testing`) for a test file or `describe`
 * block: `useFakeOpenAI()` registers the hooks that start it before the first test and close it
 * after the last, and returns the server, usable inside hooks and tests (`fake.baseURL`,
 * `fake.reply(…)`, `fake.requests`, `fake.pending()`).
 */
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.js";

export interface FakeOpenAIFixtureOptions {
  /** Before each test, forget the requests the earlier tests made (default true). */
  clearRequests?: boolean;
  /** Before each test, check that the earlier tests used every reply they queued (default false). */
  expectDrained?: boolean;
}

export function useFakeOpenAI(options: FakeOpenAIFixtureOptions = {}): FakeOpenAI {
  const { clearRequests = true, expectDrained = false } = options;
  let server: FakeOpenAI | undefined;
  const live = () => {
    if (!server) throw new Error("the fake OpenAI server starts in beforeAll: use it inside a hook or a test");
    return server;
  };
  beforeAll(async () => {
    server = await startFakeOpenAI();
  });
  afterAll(async () => {
    await server?.close();
    server = undefined;
  });
  if (clearRequests || expectDrained) {
    beforeEach(() => {
      if (clearRequests) live().requests.length = 0;
      if (expectDrained) expect(live().pending()).toBe(0);
    });
  }
  return {
    get baseURL() {
      return live().baseURL;
    },
    get requests() {
      return live().requests;
    },
    requested: (count) => live().requested(count),
    reply: (...replies) => live().reply(...replies),
    pending: () => live().pending(),
    close: () => live().close(),
  };
}
