import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, installed by scripts/chromium-install.sh (Playwright's own download is not used). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Browser suites run where Chromium is installed, are skipped with a line elsewhere, and must run under CI=true. */
export function describeWithBrowser(title: string, suite: () => void): void {
  if (existsSync(CHROMIUM_PATH)) return describe(title, suite);
  if (process.env.CI === 'true') {
    return describe(title, () =>
      it('needs Chromium', () => {
        throw new Error(`${CHROMIUM_PATH} is missing: run scripts/chromium-install.sh`);
      }),
    );
  }
  console.warn(`SKIPPED "${title}": no Chromium at ${CHROMIUM_PATH} (run scripts/chromium-install.sh)`);
  describe.skip(title, suite);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
