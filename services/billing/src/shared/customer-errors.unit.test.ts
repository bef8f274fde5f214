import { ApiError, badRequest, conflict, notFound, validationError } from '@billing/contracts';
import { customerErrorCodes } from './customer-errors';

/** What the middleware passes on for `err`. */
function translate(err: unknown) {
  let passed: unknown;
  const logged: unknown[] = [];
  const res = { locals: { log: { error: (details: object) => logged.push(details) } } };
  customerErrorCodes(err, {} as never, res as never, (next?: unknown) => void (passed = next));
  return { passed: passed as ApiError, logged };
}

describe('customer endpoint error codes', () => {
  it.each([
    [badRequest('x'), 400, 'invalid_request'],
    [notFound('x'), 404, 'resource_not_found'],
    [ApiError.of('internal_server_error', 'x'), 500, 'internal_error'],
  ])('translates %s', (err, status, code) => {
    expect(translate(err).passed).toMatchObject({ status, code });
  });

  it('keeps the codes customers share with the general table', () => {
    for (const err of [conflict('x'), validationError([]), ApiError.of('unauthorized', 'x')]) {
      expect(translate(err).passed).toBe(err);
    }
  });

  it('answers malformed JSON with invalid_request and keeps other client errors', () => {
    const parse = Object.assign(new Error('Unexpected end'), { status: 400, type: 'entity.parse.failed' });
    expect(translate(parse).passed).toMatchObject({ status: 400, code: 'invalid_request' });
    const tooLarge = Object.assign(new Error('too large'), { status: 413, type: 'entity.too.large' });
    expect(translate(tooLarge).passed).toBe(tooLarge);
  });

  it('answers a write that lost to concurrent writers 409 conflict, not 500', () => {
    const lost = Object.assign(new Error('Stream customer-cus_1 kept changing'), { name: 'WriteConflictError' });
    const { passed, logged } = translate(lost);
    expect(passed).toMatchObject({ status: 409, code: 'conflict' });
    expect(logged).toEqual([]);
  });

  it('hides an unexpected failure as internal_error and logs the original', () => {
    const boom = new Error('connection lost');
    const { passed, logged } = translate(boom);
    expect(passed).toMatchObject({ status: 500, code: 'internal_error', message: 'An internal error occurred' });
    expect(logged).toEqual([{ err: boom }]);
  });
});
