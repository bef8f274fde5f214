#!/usr/bin/env node
// Talks to an e-invoice provider's real test environment with its published test seller, to
// check what cannot be checked without the network (docs/einvoices.md):
//   npm run einvoice:smoke -- --provider ecpay [--base-url <url>]
//   npm run einvoice:smoke -- --provider amego [--base-url <url>]
// ECPay: einvoice-stage.ecpay.com.tw with the public test merchant 2000132; Amego:
// invoice-api.amego.tw with its public test seller 12345678. Each issues a NT$100 invoice under
// a fresh merchant order number, queries it, asks the same number again (one invoice), queries a
// number never used, and voids it, printing one line a check (never a key). --base-url points it
// elsewhere (an emulator). Exit 0 when every check passed.
const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const provider = option('provider');
const baseUrl = option('base-url');
const log = (line) => process.stdout.write(`${line}\n`);

async function main() {
  if (provider === 'ecpay') {
    const { smokeEcpayEinvoice } = require('../services/billing/dist/einvoices/providers/ecpay/smoke');
    return smokeEcpayEinvoice({ baseUrl, log });
  }
  if (provider === 'amego') {
    const { smokeAmegoEinvoice } = require('../services/billing/dist/einvoices/providers/amego/smoke');
    return smokeAmegoEinvoice({ baseUrl, log });
  }
  process.stderr.write('usage: npm run einvoice:smoke -- --provider ecpay|amego [--base-url <url>]\n');
  return false;
}

main().then(
  (passed) => process.exit(passed ? 0 : 1),
  (error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  },
);
