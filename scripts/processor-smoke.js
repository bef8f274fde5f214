#!/usr/bin/env node
// Talks to a payment processor's public test environment with its published test merchant, to
// check what cannot be checked without the network (docs/payments.md):
//   npm run processor:smoke -- --provider ecpay [--base-url <url>]
//   npm run processor:smoke -- --provider payuni --merchant-id <MerID> --hash-key <32> --hash-iv <16> [--base-url <url>]
// ECPay: posts an AioCheckOut/V5 form (a card order of NT$100) and asks QueryTradeInfo/V5 about
// it and about a trade that was never opened, and says whether each answer's CheckMacValue
// checks out. --base-url points it elsewhere (an emulator). Exit 0 when every check passed.
// PAYUNi: the same against its sandbox (https://sandbox-api.payuni.com.tw): posts a UPP form
// (/api/upp, a card order of NT$100) and asks /api/trade/query about it and about a trade never
// opened, and asks /api/iframe/token_get for a UNi Embed SDK token, checking each answer's
// HashInfo and GCM tag. PAYUNi publishes no test merchant (its
// SDKs' examples use placeholders), so the merchant's own sandbox keys must be given.
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
  const { periodScheduleOf, queryPeriod } = require('../services/checkout/dist/payments/ecpay/period');
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
  // A card plan (定期定額): the form with its period fields, then the plan query about it (not
  // authorised yet: ECPay's answer shows how it reads a plan that never ran).
  const planKey = `${key}-plan`;
  const plan = aioCheckOutForm(merchant, {
    idempotencyKey: planKey,
    amount: 100,
    method: 'Credit',
    itemName: 'Smoke test plan',
    description: 'processor smoke test',
    now: new Date(),
    returnUrl: 'https://example.com/ecpay/notifications',
    period: { schedule: periodScheduleOf('month', 1), returnUrl: 'https://example.com/ecpay/period' },
  });
  const planOpened = await fetch(plan.action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(plan.fields).toString(),
  });
  const planPage = await planOpened.text();
  checks.push([
    'AioCheckOut/V5 accepts a card plan (PeriodAmount, PeriodType M, Frequency 1, ExecTimes 99)',
    planOpened.ok && !/Error/i.test(planPage.replace(/<[^>]*>/g, ' ').slice(0, 2000)),
    `HTTP ${planOpened.status}`,
  ]);
  try {
    const info = await queryPeriod(merchant, merchantTradeNo(planKey), new Date());
    checks.push(['QueryCreditCardPeriodInfo answers JSON about the plan just opened', true, JSON.stringify(info)]);
  } catch (error) {
    checks.push(['QueryCreditCardPeriodInfo about the plan just opened', false, error.message]);
  }
  // CreditDetail/DoAction (refunds) cannot run on ECPay's staging site: it has no real authorisations.
  return checks;
}

async function smokePayuni(baseUrl, merchantId, hashKey, hashIV) {
  const { uppForm, payuniTradeNo } = require('../services/checkout/dist/payments/payuni/upp');
  const { PAYUNI_SANDBOX_URL } = require('../services/checkout/dist/payments/payuni/merchant');
  const { queryPayuniTrade } = require('../services/checkout/dist/payments/payuni/query');
  const merchant = { merchantId, hashKey, hashIV, baseUrl: baseUrl ?? PAYUNI_SANDBOX_URL };
  const key = `smoke-${randomBytes(8).toString('hex')}`;
  const checks = [];
  const form = uppForm(merchant, {
    idempotencyKey: key,
    amount: 100,
    method: 'Credit',
    description: 'processor smoke test',
    now: new Date(),
    notifyUrl: 'https://example.com/payuni/notify',
    returnUrl: 'https://example.com/payuni/return',
  });
  const opened = await fetch(form.action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form.fields).toString(),
  });
  const page = await opened.text();
  // PAYUNi's page for a refused form is not documented; read the text printed if this fails.
  const accepted = opened.ok && !/HashInfo|EncryptInfo|MerID|Error/i.test(page);
  const text = page
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  checks.push(['/api/upp accepts our EncryptInfo and HashInfo', accepted, `HTTP ${opened.status}: ${text}`]);
  const payuniTradeNos = [];
  for (const [what, tradeNo] of [
    ['the trade just opened', payuniTradeNo(key)],
    ['a trade never opened', payuniTradeNo(`${key}-never`)],
  ]) {
    try {
      const status = await queryPayuniTrade(merchant, tradeNo, new Date());
      checks.push([`/api/trade/query about ${what}, its HashInfo and tag checked`, true, JSON.stringify(status)]);
      if (status.payuniTradeNo) payuniTradeNos.push(status.payuniTradeNo);
    } catch (error) {
      checks.push([`/api/trade/query about ${what}`, false, error.message]);
    }
  }
  // trade/cancel (a whole refund on the day of payment) of the unpaid trade: PAYUNi must refuse it,
  // signed; an unsigned answer means the path or its fields are not what docs/payments.md says.
  const { cancelPayuniAuthorization } = require('../services/checkout/dist/payments/payuni/refund');
  for (const tradeNo of payuniTradeNos.slice(0, 1)) {
    try {
      const outcome = await cancelPayuniAuthorization(merchant, { payuniTradeNo: tradeNo }, new Date());
      checks.push([
        '/api/trade/cancel refuses an unpaid trade, signed',
        outcome.status === 'refused',
        JSON.stringify(outcome),
      ]);
    } catch (error) {
      checks.push(['/api/trade/cancel answers signed', false, error.message]);
    }
  }
  // UNi Embed: an SDK token for card fields on https://example.com, kept for charges later (UseTokenType 2).
  const { requestSdkToken } = require('../services/checkout/dist/payments/payuni/embed');
  try {
    const token = await requestSdkToken(
      merchant,
      { iframeDomain: 'https://example.com', creditToken: key },
      new Date(),
    );
    checks.push([
      '/api/iframe/token_get answers an SDK token, its HashInfo and tag checked',
      true,
      `expires ${token.expiresAt}`,
    ]);
  } catch (error) {
    checks.push(['/api/iframe/token_get', false, error.message]);
  }
  return checks;
}

async function main() {
  let checks;
  if (provider === 'ecpay') {
    checks = await smokeEcpay(option('base-url'));
  } else if (provider === 'payuni') {
    const [merchantId, hashKey, hashIV] = [option('merchant-id'), option('hash-key'), option('hash-iv')];
    if (!merchantId || !hashKey || !hashIV) {
      console.error(
        'PAYUNi publishes no public test merchant: give your sandbox merchant with\n' +
          '  --provider payuni --merchant-id <MerID> --hash-key <32 characters> --hash-iv <16 characters> [--base-url <url>]',
      );
      process.exit(2);
    }
    checks = await smokePayuni(option('base-url'), merchantId, hashKey, hashIV);
  } else {
    console.error(
      'usage: npm run processor:smoke -- --provider ecpay|payuni [...] (see the top of scripts/processor-smoke.js)',
    );
    process.exit(2);
  }
  for (const [name, ok, detail] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
  process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
}

main().catch((error) => {
  console.error(`smoke test could not run: ${error.message}`);
  process.exit(1);
});
