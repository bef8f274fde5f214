import type { IncomingMessage } from 'node:http';
import { accessTokenOf } from './access-tokens';

const request = (headers: Record<string, string>) => ({ headers }) as IncomingMessage;

describe('accessTokenOf', () => {
  it('takes a bearer that is not shaped as an API key', () => {
    expect(accessTokenOf(request({ authorization: 'Bearer 8mN2-opaque_Token' }))).toBe('8mN2-opaque_Token');
  });

  it.each([
    ['a Secret Key', { authorization: `Bearer sk_test_${'a'.repeat(32)}` }],
    ['a Publishable Key', { authorization: `Bearer pk_live_${'a'.repeat(32)}` }],
    ['a malformed key', { authorization: 'Bearer sk_test_short' }],
    ['a key header beside the bearer', { authorization: 'Bearer opaque', 'x-service-secret-key': 'sk_test_x' }],
    ["the SDK's key header beside the bearer", { authorization: 'Bearer opaque', 'x-recur-publishable-key': 'pk' }],
    ['another scheme', { authorization: 'Basic abc' }],
    ['no authorization', {}],
  ])('leaves %s to the API key check', (_name, headers) => {
    expect(accessTokenOf(request(headers as Record<string, string>))).toBeUndefined();
  });
});
