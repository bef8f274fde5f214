#!/usr/bin/env node
// Talks to a payment processor's public test environment with its published test merchant, to
// check what cannot be checked without the network (docs/payments.md):
//   npm run processor:smoke -- --provider ecpay [--base-url <url>]
// ECPay: posts an AioCheckOut/V5 form (a card order of NT$100) and asks QueryTradeInfo/V5 about
// it and about a trade that was never opened, and says whether each answer's CheckMacValue
// checks out. --base-url points it elsewhere (an emulator). Exit 0 when every check passed.
const { randomBytes } = require('node:crypto');

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const provider = option('provider');

async function smokeEcpay(baseUrl) {
  const { aioCheckOutForm, merchantTradeNo } = require('../services/checkout/dist/payments/ecpay/aio');
  const { ECPAY_STAGING_MERCHANT } = require('../services/checkout/dist/payments/ecpay/merchant');
  const { queryTrade } = require('../services/checkout/dist/payments/ecpay/query');
  const merchant = { ...ECPAY_STAGING_MERCHANT, baseUrl: baseUrl ?? ECPAY_STAGING_MERCHANT.baseUrl };
  const key = `smoke-${randomBytes(8).toString('hex')}`;
  const checks = [];
  const form = aioCheckOutForm(merchant, {
    idempotencyKey: key,
    amount: 100,
    method: 'Credit',
    itemName: 'Smoke test',
    description: 'processor smoke test',
    now: new Date(),
    returnUrl: 'https://example.com/ecpay/notifications',
  });
  const opened = await fetch(form.action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form.fields).toString(),
  });
  const page = await opened.text();
  // ECPay answers a form it refuses with a short page naming the error; read it if this fails.
  const accepted = opened.ok && !/CheckMacValue/i.test(page);
  const text = page
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  checks.push(['AioCheckOut/V5 accepts our form and CheckMacValue', accepted, `HTTP ${opened.status}: ${text}`]);
  for (const [what, tradeNo] of [
    ['the trade just opened', merchantTradeNo(key)],
    ['a trade never opened', merchantTradeNo(`${key}-never`)],
  ]) {
    try {
      const status = await queryTrade(merchant, tradeNo, new Date());
      checks.push([`QueryTradeInfo/V5 about ${what}, its CheckMacValue checked`, true, JSON.stringify(status)]);
    } catch (error) {
      checks.push([`QueryTradeInfo/V5 about ${what}`, false, error.message]);
    }
  }
  return checks;
}

async function main() {
  if (provider !== 'ecpay') {
    console.error(
      provider === 'payuni'
        ? 'PAYUNi: the adapter is not built yet (docs/payments.md); nothing to check'
        : 'usage: npm run processor:smoke -- --provider ecpay [--base-url <url>]',
    );
    process.exit(2);
  }
  const checks = await smokeEcpay(option('base-url'));
  for (const [name, ok, detail] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
  process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
}

main().catch((error) => {
  console.error(`smoke test could not run: ${error.message}`);
  process.exit(1);
});
