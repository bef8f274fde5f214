// A webhook receiver for trying the platform out (docs/quickstart.md):
//   WEBHOOK_SECRET=whsec_... node scripts/webhook-receiver.js [port]
// listens on 127.0.0.1:<port>/webhooks (default 4242), checks each request's Standard Webhooks
// signature with WEBHOOK_SECRET (docs/webhooks.md, "Delivery"), answers 204 when it holds and
// 400 otherwise, and prints one line per webhook: the verdict, the event type and its id.
const { createHmac, timingSafeEqual } = require('node:crypto');
const { createServer } = require('node:http');

const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith('whsec_')) {
  process.stderr.write('Set WEBHOOK_SECRET to the endpoint secret (whsec_...) the platform gave.\n');
  process.exit(1);
}
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
const port = Number(process.argv[2] ?? 4242);
/** Signatures older or newer than this are refused, as a real receiver should. */
const TOLERANCE_SECONDS = 300;

/** True when one of the `v1,<base64>` signatures is the HMAC of `<id>.<timestamp>.<body>`. */
function verified(headers, body) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  if (!id || !timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .map((entry) => Buffer.from(entry.replace(/^v1,/, ''), 'base64'))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}

const server = createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    const ok = request.url === '/webhooks' && request.method === 'POST' && verified(request.headers, body);
    const event = (() => {
      try {
        return JSON.parse(body);
      } catch {
        return {};
      }
    })();
    process.stdout.write(`webhook ${ok ? 'verified' : 'REFUSED (bad signature)'}: ${event.type} ${event.id}\n`);
    response.writeHead(ok ? 204 : 400).end();
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`Receiving webhooks at http://127.0.0.1:${port}/webhooks\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
