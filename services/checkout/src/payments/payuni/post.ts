import { PayuniCipherError, open, seal } from './crypto';
import type { PayuniMerchant } from './merchant';

/**
 * Posts `fields` sealed to `path` and answers the fields inside the answer (its outside Status
 * first, the inside's over it). Anything that cannot be trusted throws `Unanswered` (the caller's class),
 * including an answer without EncryptInfo: PAYUNi's errors (wrong parameters, a MerTradeNo used
 * before) come unsigned and say nothing about whether the trade exists.
 */
export async function postSealed(
  merchant: PayuniMerchant,
  path: string,
  version: string,
  fields: Record<string, string>,
  options: { timeoutMs: number; fetch?: typeof fetch },
  Unanswered: new (message: string) => Error,
): Promise<Record<string, string>> {
  let body: string;
  try {
    const response = await (options.fetch ?? fetch)(`${merchant.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(seal(merchant.merchantId, fields, merchant, version)).toString(),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (!response.ok) throw new Unanswered(`${path} answered HTTP ${response.status}`);
    body = await response.text();
  } catch (error) {
    if (error instanceof Unanswered) throw error;
    throw new Unanswered(`${path} did not answer: ${(error as Error).message}`);
  }
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw new Unanswered(`${path} answer is not JSON`);
  }
  if (!answer || typeof answer !== 'object') throw new Unanswered(`${path} answer is not an object`);
  if (!answer.EncryptInfo) {
    throw new Unanswered(`${path} answered Status ${String(answer.Status)}: ${String(answer.Message ?? '')}, unsigned`);
  }
  let inside: Record<string, string>;
  try {
    inside = open(answer, merchant);
  } catch (error) {
    if (error instanceof PayuniCipherError) throw new Unanswered(`${path} answer: ${error.message}`);
    throw error;
  }
  if (answer.MerID !== merchant.merchantId || (inside.MerID !== undefined && inside.MerID !== merchant.merchantId)) {
    throw new Unanswered(`${path} answered for another merchant`);
  }
  return { ...(typeof answer.Status === 'string' ? { Status: answer.Status } : {}), ...inside };
}
