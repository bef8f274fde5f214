import { randomBytes } from 'node:crypto';
import { createLogger } from './logger';
import { REDACTED, pathForLog, redactText } from './redact';

/** A logger whose JSON lines are collected, at debug. */
function capture() {
  const lines: string[] = [];
  const logger = createLogger('test', { level: 'debug', destination: { write: (line) => lines.push(line) } });
  return { logger, lines, text: () => lines.join('') };
}

/** What PGlite and pg attach to a failed statement. */
function databaseError(message: string, code: string, extra: Record<string, unknown>) {
  return Object.assign(new Error(message), { code, ...extra });
}

describe('log redaction', () => {
  it('drops the parameters, the row and the query options of a database error, keeping its code', () => {
    const { logger, lines, text } = capture();
    const err = databaseError('new row for relation "events" violates check constraint "no_pay"', '23514', {
      params: ['pi_1_secret_abcdef', 'ada@example.com', 'Ada Lovelace'],
      queryOptions: { rowMode: 'object' },
      detail: 'Failing row contains (ada@example.com, Ada Lovelace, pi_1_secret_abcdef).',
      where: 'SQL statement "INSERT ..."',
      constraint: 'no_pay',
      query: 'INSERT INTO events (data) VALUES ($1)',
    });
    logger.error({ err }, 'request error');
    for (const value of ['pi_1_secret_abcdef', 'ada@example.com', 'Ada Lovelace', 'Failing row']) {
      expect(text()).not.toContain(value);
    }
    expect(JSON.parse(lines[0]!).err).toMatchObject({
      type: 'Error',
      code: '23514',
      constraint: 'no_pay',
      params: REDACTED,
      detail: REDACTED,
      query: 'INSERT INTO events (data) VALUES ($1)',
    });
  });

  it('masks the value a data exception quotes, in its message and stack, and in a cause', () => {
    const { logger, text } = capture();
    const inner = databaseError('invalid input syntax for type integer: "Ada Lovelace"', '22P02', {});
    logger.error({ err: new Error('projection failed', { cause: inner }) }, 'failed');
    logger.error(databaseError('invalid input syntax for type uuid: "Grace Hopper"', '22P02', {}));
    expect(text()).not.toContain('Ada Lovelace');
    expect(text()).not.toContain('Grace Hopper');
    expect(text()).toContain('invalid input syntax for type integer');
  });

  it('masks secret fields anywhere in a logged object, and secret-shaped values in any string', () => {
    const { logger, text } = capture();
    logger.warn(
      {
        headers: { authorization: 'Bearer adm_0123456789abcdefghijkl', 'X-Service-Secret-Key': 'sk_test_abc' },
        session: { client_secret: 'cs_1_secret_x', customer_email: 'ada@example.com', card_number: '4242' },
        note: 'paid with 4242 4242 4242 4242 by ada@example.com using sk_live_abcdef and whsec_c2VjcmV0',
        hash: 'a'.repeat(64),
        nested: [{ deeper: { password: 'hunter2' } }],
      },
      'sent by grace@example.com',
    );
    for (const value of [
      'adm_0123456789abcdefghijkl',
      'sk_test_abc',
      'cs_1_secret_x',
      'ada@example.com',
      'grace@example.com',
      '4242 4242 4242 4242',
      'sk_live_abcdef',
      'whsec_c2VjcmV0',
      'a'.repeat(64),
      'hunter2',
    ]) {
      expect(text()).not.toContain(value);
    }
  });

  it('keeps what is not secret: ids, numbers, timestamps, codes', () => {
    const { logger, lines } = capture();
    logger.info(
      { session: 'cs_abc', amount: 299, at: '2026-03-01T00:00:00.000Z', code: 'conflict', id: 1700000000000 },
      'ok',
    );
    expect(JSON.parse(lines[0]!)).toMatchObject({
      session: 'cs_abc',
      amount: 299,
      code: 'conflict',
      id: 1700000000000,
    });
    expect(redactText('order 1234567890123 of 4000000000000002')).toBe(`order 1234567890123 of ${REDACTED}`);
  });

  it('leaves stack paths alone', () => {
    const stack = 'at f (/work/main/node_modules/@billing/service/dist/app.js:10:5)';
    expect(redactText(stack)).toBe(stack);
  });

  it('logs a path without its query string and without an external customer id', () => {
    expect(pathForLog('/v1/customers/entitlements?email=ada@example.com')).toBe('/v1/customers/entitlements');
    expect(pathForLog('/v1/customers/external/ada@example.com')).toBe(`/v1/customers/external/${REDACTED}`);
    expect(pathForLog('/checkout/cs_abc/pay')).toBe('/checkout/cs_abc/pay');
  });

  it('masks the credential of every URL that carries one, in its path or its query, wherever it is logged', () => {
    const token = randomBytes(32).toString('base64url');
    expect(pathForLog(`/portal/portal_session_1/${token}`)).toBe(`/portal/portal_session_1/${REDACTED}`);
    expect(pathForLog(`/portal/portal_session_1/short/subscriptions/sub_1/cancel`)).toBe(
      `/portal/portal_session_1/${REDACTED}/subscriptions/sub_1/cancel`,
    );
    expect(pathForLog('/dashboard/invite/abc/more')).toBe(`/dashboard/invite/${REDACTED}/more`);
    expect(pathForLog('/sandbox/card-form/cft_cs_1_abc')).toBe(`/sandbox/card-form/${REDACTED}`);
    expect(pathForLog('/checkout/invoice-payments/iis8NdMuqWaM17nD/ecpay/result')).toBe(
      `/checkout/invoice-payments/${REDACTED}/ecpay/result`,
    );
    expect(pathForLog('/sandbox/card-form.js')).toBe('/sandbox/card-form.js');
    // By shape: a new route whose path carries one of our 32-byte tokens.
    expect(pathForLog(`/dashboard/reset/${token}`)).toBe(`/dashboard/reset/${REDACTED}`);
    expect(redactText(`No route for GET /portal/ps_1/${token}/x`)).toBe(`No route for GET /portal/ps_1/${REDACTED}/x`);
    expect(redactText(`see http://127.0.0.1:8080/dashboard/invite/abc`)).toBe(
      `see http://127.0.0.1:8080/dashboard/invite/${REDACTED}`,
    );
    expect(redactText('/embed/checkout?id=cs_1&client_secret=abc&token=def&page=2')).toBe(
      `/embed/checkout?id=cs_1&client_secret=${REDACTED}&token=${REDACTED}&page=2`,
    );
    // A stack trace's source paths are not URLs.
    const frame = 'at handler (/srv/services/billing/dist/portal/page/routes.js:12:3)';
    expect(redactText(frame)).toBe(frame);
  });
});
