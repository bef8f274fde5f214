import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page, chromium } from 'playwright-core';
import { type CreatedOrganization, type Platform, clientOf, plan, startPlatform } from './platform';

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

export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      ...extraArgs,
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

/** The merchant's site: where the buyer lands after paying (/thanks) or cancelling. */
export async function merchantSite(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<!doctype html><title>Merchant</title><h1 id="landed">${req.url?.startsWith('/thanks') ? 'Thanks' : 'Cancelled'}</h1>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Fills the hosted checkout form as a buyer would (email only when it is not prefilled) and pays. */
export async function fillAndPay(page: Page, cardNumber: string): Promise<void> {
  const email = page.getByLabel('Email');
  if ((await email.getAttribute('readonly')) === null) await email.fill('buyer@example.com');
  await page.getByLabel('Name').fill('Mei Lin');
  await page.getByLabel('Card number').fill(cardNumber);
  await page.getByLabel('Expiry (MM/YY)').fill('12/34');
  await page.getByLabel('CVC').fill('123');
  await page.getByRole('button', { name: /Pay/ }).click();
}

/** What a browser test buys from: the platform with checkout, Chromium, a merchant site and a "pro" plan at 299. */
export interface Shop {
  platform: Platform;
  org: CreatedOrganization;
  browser: Browser;
  merchant: Awaited<ReturnType<typeof merchantSite>>;
  close: () => Promise<void>;
}

export async function openShop(): Promise<Shop> {
  const [platform, browser, merchant] = await Promise.all([
    startPlatform({ checkout: true }),
    launchChromium(),
    merchantSite(),
  ]);
  const client = clientOf(platform.gatewayUrl);
  const org = await client.createOrganization();
  await client.createProduct(org.id, plan({ name: 'Pro plan', slug: 'pro', price: 299 }));
  return {
    platform,
    org,
    browser,
    merchant,
    close: async () => {
      await browser.close();
      merchant.server.close();
      await platform.stop();
    },
  };
}

declare const window: any;
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core in the page: no serious or critical violation (each named with its elements when one is found). */
export async function expectAccessible(page: Page): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> = await page.evaluate(
    async () => (await window.axe.run(window.document, { resultTypes: ['violations'] })).violations,
  );
  const serious = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect({ url: page.url(), serious }).toEqual({ url: page.url(), serious: [] });
}

/** An element's text as a person reads it: runs of whitespace (the page's line breaks) as one space. */
export const textOf = async (locator: { textContent(): Promise<string | null> }) =>
  ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
