import { toApiError } from './errors';

/** Issue 12, part 5: a write that lost to concurrent writers is `409 conflict`, not a 500. */
describe('toApiError for concurrent writes', () => {
  const named = (name: string) => Object.assign(new Error('lost'), { name });
  const sql = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

  it.each([
    ['the event store gave up (WriteConflictError)', named('WriteConflictError')],
    ['a version conflict outside handleCommand', named('ExpectedVersionConflictError')],
    ['a serialization failure', sql('40001')],
    ['a deadlock', sql('40P01')],
    ['a unique violation no route named', sql('23505')],
  ])('answers 409 conflict when %s', (_case, error) => {
    const apiError = toApiError(error, '1mb');
    expect(apiError.status).toBe(409);
    expect(apiError.code).toBe('conflict');
  });

  it('still answers any other failure 500 without its message', () => {
    const apiError = toApiError(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }), '1mb');
    expect(apiError.status).toBe(500);
    expect(apiError.message).not.toContain('relation');
  });
});
