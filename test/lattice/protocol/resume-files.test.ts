/** The resume file is read and written only as a regular file in a real `.lattice` directory. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readResume, resumePath, writeResume } from "../../../src/lattice/index.js";

describe("resume files", () => {
  let ws: string;
  let elsewhere: string;
  beforeEach(() => {
    ws = mkdtempSync(join(tmpdir(), "pmagent-resume-ws-"));
    elsewhere = mkdtempSync(join(tmpdir(), "pmagent-resume-elsewhere-"));
  });
  afterEach(() => {
    rmSync(ws, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it("refuses a resume file that is a FIFO instead of blocking on it", () => {
    mkdirSync(join(ws, ".lattice"));
    execFileSync("mkfifo", [resumePath(ws)]);
    expect(() => readResume(ws)).toThrow(
      expect.objectContaining({
        code: "invalid_resume",
        message: `the resume file ${resumePath(ws)} is a FIFO, not a regular file: it must be a plain file in the workspace (no FIFO, socket, device or symbolic link); it is not read`,
      }),
    );
  });

  it("refuses a resume file that is a link to a file elsewhere", () => {
    mkdirSync(join(ws, ".lattice"));
    writeFileSync(join(elsewhere, "secrets.json"), JSON.stringify({ work_item_id: "w", checkpoint_id: "chk_1" }));
    symlinkSync(join(elsewhere, "secrets.json"), resumePath(ws));
    expect(() => readResume(ws)).toThrow(`the resume file ${resumePath(ws)} is a symbolic link, not a regular file`);
  });

  it("writes no resume file through a .lattice that links elsewhere", () => {
    symlinkSync(elsewhere, join(ws, ".lattice"));
    expect(() => writeResume(ws, { work_item_id: "w", checkpoint_id: "chk_1", inputs: { token: "s3cret" } })).toThrow(
      expect.objectContaining({
        code: "not_regular_file",
        message: `the directory of the resume file ${join(ws, ".lattice")} is a symbolic link: it must be a real directory in the workspace; nothing is read or written through it`,
      }),
    );
    expect(existsSync(join(elsewhere, "resume.json"))).toBe(false);
  });

  it("writes no resume file when .lattice is a plain file", () => {
    writeFileSync(join(ws, ".lattice"), "not a directory");
    expect(() => writeResume(ws, { work_item_id: "w", checkpoint_id: "chk_1" })).toThrow(
      `the directory of the resume file ${join(ws, ".lattice")} is a regular file, not a directory`,
    );
  });

  it("reads and writes a resume in a real .lattice as before", () => {
    const key = writeResume(ws, { work_item_id: "w", checkpoint_id: "chk_1" });
    expect(readResume(ws)).toMatchObject({
      key,
      replayed: false,
      resume: { work_item_id: "w", checkpoint_id: "chk_1" },
    });
  });
});
