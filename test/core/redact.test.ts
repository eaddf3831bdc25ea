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

describe("Redactor: a known secret is found by meaning, not spelling", () => {
  const SECRET = "S3cr3t-Value_42/x";
  const r = new Redactor([SECRET]);
  const jsonEscaped = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  const percentAll = (s: string) =>
    [...Buffer.from(s)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");

  it("catches JSON escapes left in text, single or doubled, whole or mixed with plain characters", () => {
    for (const spelled of [
      jsonEscaped(SECRET),
      jsonEscaped(SECRET).toUpperCase().replace(/\\U/g, "\\u"),
      `S3${jsonEscaped("cr3t")}-Value_42/x`,
      jsonEscaped(SECRET).replace(/\\/g, "\\\\"),
    ]) {
      expect(r.redact(`key=${spelled};`)).toBe(`key=${REDACTED};`);
    }
  });

  it("catches percent-encoding: encodeURIComponent, every byte encoded, lower-case hex, %25-doubled", () => {
    for (const spelled of [
      encodeURIComponent(SECRET),
      percentAll(SECRET),
      percentAll(SECRET).toLowerCase(),
      percentAll(SECRET).replace(/%/g, "%25"),
    ]) {
      expect(r.redact(`https://x.invalid/?k=${spelled}&a=1`)).toBe(`https://x.invalid/?k=${REDACTED}&a=1`);
    }
  });

  it("catches base64 (standard and URL-safe) at any alignment inside a longer blob, and hex, redacting the whole blob", () => {
    for (const prefix of ["", "a", "ab", "user:"]) {
      const data = Buffer.from(`${prefix}${SECRET}!tail`);
      for (const b64 of [data.toString("base64"), data.toString("base64url")])
        expect(r.redact(`Basic ${b64} end`)).toBe(`Basic ${REDACTED} end`);
      expect(r.redact(`hex ${data.toString("hex")} end`)).toBe(`hex ${REDACTED} end`);
    }
  });

  it("catches a secret holding JSON-escaped characters as JSON.stringify writes it, and a space written as '+'", () => {
    const odd = new Redactor(['pa"ss wo\\rd']);
    expect(odd.redact(JSON.stringify({ p: 'pa"ss wo\\rd' }))).toBe(`{"p":"${REDACTED}"}`);
    expect(odd.redact("q=pa%22ss+wo%5Crd")).toBe(`q=${REDACTED}`);
  });

  it("redactValue and redactJson decode JSON first, so any escape of the secret is caught, keys included", () => {
    const line = `{"message":"token ${jsonEscaped(SECRET)}","${jsonEscaped(SECRET)}":1}`;
    const got = r.redactJson(line);
    expect(got?.json).toBe(`{"message":"token ${REDACTED}","${REDACTED}":1}`);
    expect(r.redactValue(JSON.parse(line))).toEqual({ message: `token ${REDACTED}`, [REDACTED]: 1 });
  });

  it("leaves ordinary text and JSON alone, and says so cheaply", () => {
    const plain = '{"message":"step 12 done: 50% of c:\\\\dir, QUJDREVG","kind":"progress","ok":true}';
    expect(r.redact(plain)).toBe(plain);
    expect(r.redactJson(plain)).toBeNull();
    expect(r.suspect('{"message":"step 12 done","kind":"progress"}')).toBe(false);
    expect(r.suspect(`{"m":"${jsonEscaped("S")}"}`)).toBe(true);
  });

  it("ignores values too short to be told from ordinary words", () => {
    expect(new Redactor(["abc12"]).redact("abc12 YWJjMTI=")).toBe("abc12 YWJjMTI=");
  });
});
