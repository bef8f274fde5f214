import { checkMacValue } from './check-mac';
import type { EcpayMerchant } from './merchant';

/** Options of every server-to-server call: a fetch to use instead of the global one, and how long to wait. */
export type EcpayCallOptions = { fetch?: typeof fetch; timeoutMs?: number };

/**
 * Posts `fields`, signed with the merchant's CheckMacValue, as a form to `path` of the merchant's
 * ECPay site, and answers the body. No answer, a timeout or an HTTP error throws `Unanswered` (the
 * caller's class): what the caller asked may or may not have happened.
 */
export async function postSigned(
  merchant: EcpayMerchant,
  path: string,
  fields: Record<string, string>,
  options: EcpayCallOptions & { timeoutMs: number },
  Unanswered: new (message: string) => Error,
): Promise<string> {
  try {
    const response = await (options.fetch ?? fetch)(`${merchant.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, CheckMacValue: checkMacValue(fields, merchant) }).toString(),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (!response.ok) throw new Unanswered(`${path} answered HTTP ${response.status}`);
    return await response.text();
  } catch (error) {
    if (error instanceof Unanswered) throw error;
    throw new Unanswered(`${path} did not answer: ${(error as Error).message}`);
  }
}
