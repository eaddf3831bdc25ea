/**
 * Property: a configured secret, written in any of the spellings a hostile sprite can use without
 * effort and embedded anywhere in a log line or an event, never survives redaction — neither as
 * itself nor as the spelling it was written in. Runs: PMAGENT_CHAOS_RUNS (default 200).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Redactor } from "../../src/core/index.js";
import { eventId, redactEvent } from "../../src/lattice/index.js";

const RUNS = Number(process.env.PMAGENT_CHAOS_RUNS ?? 200);

/** Characters a secret is made of: printable ASCII (JSON- and URL-special ones included), a few non-ASCII. */
const secretChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom(" ", "é", "ß", "€", "日", "😀") },
);
const secretArb = fc
  .array(secretChar, { minLength: 6, maxLength: 32 })
  .map((cs) => cs.join(""))
  .filter((s) => s.length >= 6 && s.trim() === s);
const fillerArb = fc.string({ maxLength: 40 });

const jsonEscaped = (s: string) =>
  [...s]
    .flatMap((c) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`))
    .join("");
const ENCODINGS: Record<string, (s: string) => string> = {
  plain: (s) => s,
  "json-escaped": jsonEscaped,
  "json-escaped-upper": (s) => jsonEscaped(s).toUpperCase().replace(/\\U/g, "\\u"),
  "url-component": (s) => encodeURIComponent(s),
  "url-every-byte": (s) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join(""),
  base64: (s) => Buffer.from(s).toString("base64"),
  base64url: (s) => Buffer.from(s).toString("base64url"),
  hex: (s) => Buffer.from(s).toString("hex"),
};

describe("redaction of an encoded secret (property)", () => {
  it("a secret in any encoding, embedded in any text, is gone after redaction", () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.constantFrom(...Object.keys(ENCODINGS)),
        fillerArb,
        fillerArb,
        fc.integer({ min: 0, max: 2 }),
        (secret, encoding, before, after, base64Lead) => {
          const r = new Redactor([secret]);
          // A base64 blob may hold the secret at any of the three alignments: lead with 0–2 bytes.
          const encoded = encoding.startsWith("base64")
            ? Buffer.from(`${"xy".slice(0, base64Lead)}${secret}`).toString(
                encoding === "base64" ? "base64" : "base64url",
              )
            : ENCODINGS[encoding]!(secret);
          const out = r.redact(`${before} ${encoded} ${after}`);
          expect(out).not.toContain(secret);
          expect(out).not.toContain(encoded);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("a secret in any encoding inside an event, its JSON escaped or not, is gone from the stored event, and the id is of what is stored", () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.constantFrom(...Object.keys(ENCODINGS)),
        fillerArb,
        fc.boolean(),
        (secret, encoding, filler, escapeInJson) => {
          const r = new Redactor([secret]);
          const encoded = ENCODINGS[encoding]!(secret);
          const event = {
            protocol_version: "v1",
            event_type: "INFO",
            sprite_id: "s",
            work_item_id: "w",
            timestamp: "2026-01-01T00:00:00Z",
            payload: { message: `${filler}${encoded}`, metadata: { [encoded]: [encoded] } },
          };
          let json = JSON.stringify(event);
          // The hostile spelling: the secret's characters as JSON escapes in the line itself.
          if (escapeInJson && encoding === "plain")
            json = json.split(JSON.stringify(secret).slice(1, -1)).join(jsonEscaped(secret));
          const stored = redactEvent(r, json, event.timestamp, eventId(JSON.parse(json)));
          const value = JSON.parse(stored.json) as unknown;
          const text = JSON.stringify(value);
          expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
          expect(text).not.toContain(JSON.stringify(encoded).slice(1, -1));
          expect(stored.json).not.toContain(jsonEscaped(secret));
          expect(stored.id).toBe(eventId(value));
          expect(stored.id).not.toBe(eventId(JSON.parse(json)));
        },
      ),
      { numRuns: RUNS },
    );
  });
});
