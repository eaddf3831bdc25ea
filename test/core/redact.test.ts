import { describe, expect, it } from "vitest";
import { REDACTED, Redactor } from "../../src/core/index.js";

describe("Redactor", () => {
  const r = new Redactor(["hunter2-secret-value"]);

  it("redacts every token shape, whatever the case of the words that announce one", () => {
    const tokens = [
      "ghp_abcdefghijklmnopqrstuvwxyz0123",
      "gho_abcdefghijklmnopqrstuvwxyz0123",
      "github_pat_abcdefghijklmnopqrstuvwxyz_0123",
      "sk-proj-abcdefghijklmnopqrstuvwxyz",
      "sk-abcdefghijklmnopqrstuvwxyz0123",
      "xoxb-1234567890-abcdefghij",
      "AKIAABCDEFGHIJKLMNOP",
      "Bearer abcdefghijklmnopqrstuvwxyz012345",
      "BEARER abcdefghijklmnopqrstuvwxyz012345",
      "Token abcdefghijklmnopqrstuvwxyz012345",
      "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
    ];
    for (const token of tokens) expect(r.redact(`before ${token} after`)).toBe(`before ${REDACTED} after`);
  });

  it("redacts known secret values and leaves ordinary text untouched", () => {
    expect(r.redact('{"password":"hunter2-secret-value"}')).toBe(`{"password":"${REDACTED}"}`);
    const plain = '{"message":"step 12 done","kind":"progress","tokens":3,"skip":"desk-top"}';
    expect(r.redact(plain)).toBe(plain);
  });
});
