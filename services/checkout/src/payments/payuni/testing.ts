import { open, seal } from './crypto';
import { PAYUNI_SANDBOX_URL, type PayuniMerchant } from './merchant';

/** For the client's unit tests: a merchant with keys in the shape PAYUNi issues (it publishes none). */
export const TEST_MERCHANT: PayuniMerchant = {
  merchantId: 'abc',
  hashKey: '12345678901234567890123456789012',
  hashIV: '1234567890123456',
  baseUrl: PAYUNI_SANDBOX_URL,
};

/** A fetch that records what was posted (outside and inside the EncryptInfo) and answers `answer` (sealed unless told otherwise). */
export function fakePayuni(
  answer: (request: Record<string, string>) => unknown,
  status = 200,
  merchant: PayuniMerchant = TEST_MERCHANT,
) {
  const calls: { url: string; outside: Record<string, string>; inside: Record<string, string> }[] = [];
  const fetchFake: typeof fetch = async (input, init) => {
    const outside = Object.fromEntries(new URLSearchParams(String(init?.body)));
    const inside = open(outside, merchant);
    calls.push({ url: String(input), outside, inside });
    const body = answer(inside);
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  };
  return { calls, fetch: fetchFake };
}

/** An answer PAYUNi signed, carrying `inside`. */
export const sealedAnswer = (inside: Record<string, string>, version = '1.0', merchant = TEST_MERCHANT) => ({
  Status: inside.Status ?? 'SUCCESS',
  ...seal(merchant.merchantId, inside, merchant, version),
});
