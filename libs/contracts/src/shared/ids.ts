import { randomBytes } from 'node:crypto';

/** Every public id is a prefix and a random base62 part, so ids say what they are and cannot be guessed. */
export const ID_PREFIX = {
  organization: 'org',
  product: 'prod',
  customer: 'cus',
  checkoutSession: 'cs',
  order: 'ord',
  paymentIntent: 'pi',
  setupIntent: 'seti',
  subscription: 'sub',
  subscriptionSchedule: 'sub_sched',
  invoice: 'in',
  refund: 're',
  testClock: 'clock',
  paymentLink: 'plink',
  promotionCode: 'promo',
  coupon: 'cpn',
  redemption: 'red',
  portalSession: 'portal_session',
  portalConfiguration: 'bpc',
  webhookEndpoint: 'wh',
  webhookEvent: 'evt',
  webhookDelivery: 'whd',
  apiKey: 'key',
  request: 'req',
} as const;
export type IdKind = keyof typeof ID_PREFIX;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 24 base62 characters carry about 143 bits of randomness. */
export const RANDOM_PART_LENGTH = 24;

/**
 * Bytes from the OS CSPRNG, fetched 4 KiB at a time: one system call per hundred-odd ids
 * instead of one per id (every request gets an id). Each byte is used once.
 */
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomPoolOffset = 0;
function randomByte(): number {
  if (randomPoolOffset >= randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomPoolOffset = 0;
  }
  return randomPool[randomPoolOffset++]!;
}

/**
 * Uniform base62 from the OS CSPRNG. Bytes of 248 and above are rejected: 248 = 4 * 62, so
 * keeping only smaller bytes makes `byte % 62` uniform (no modulo bias).
 */
export function randomBase62(length: number = RANDOM_PART_LENGTH): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export function newId(kind: IdKind, length: number = RANDOM_PART_LENGTH): string {
  return `${ID_PREFIX[kind]}_${randomBase62(length)}`;
}

export function isIdOf(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIX[kind]}_`;
  return value.startsWith(prefix) && /^[0-9A-Za-z]+$/.test(value.slice(prefix.length));
}
