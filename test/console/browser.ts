/** Headless Chromium for the console tests: Debian's, required in CI, skipped with a word elsewhere. */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI === "true")
  throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium for the console tests`);
if (!haveChromium)
  console.warn(`${CHROMIUM} is not installed: skipping the console end-to-end tests (apt-get install -y chromium)`);

/** No network beyond the test's own server: nothing in the background reaches out. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
