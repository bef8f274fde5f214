import { randomBytes } from 'node:crypto';

/** Every public id is a prefix and 24 base62 characters, so ids say what they are and cannot be guessed. */
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
  email: 'eml',
  apiKey: 'key',
  request: 'req',
  creditGrant: 'cgr',
  creditSpend: 'cspd',
  creditAdjustment: 'cadj',
  meter: 'mtr',
} as const;
export type IdKind = keyof typeof ID_PREFIX;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** The characters after an id's prefix, a time part and a random part (`newId`); also `randomBase62`'s default. */
export const ID_BODY_LENGTH = 24;

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
export function randomBase62(length: number = ID_BODY_LENGTH): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/**
 * The first characters of an id are the second it was made in, in fixed-width base 36 (digits and
 * lowercase letters, ordered alike by the C collation and by language collations such as
 * en_US), the rest random: about 101 bits, as unguessable as before. Ids made later sort later,
 * so a new row's id lands on the right edge of the primary-key index and of every index led by
 * an id (events by stream, subscriptions by customer) instead of on a random page of an index
 * as large as the merchant's history: after each checkpoint PostgreSQL writes a page's first
 * change whole to its log, so a random page per insert made every write path cost more as the
 * merchant grew (bench/growth). It says no more than the object's `created`. The wall clock,
 * not a test clock's: the order is the order rows are written in.
 */
const TIME_PART_LENGTH = 7;

/** Seconds since 1970 in base 36, seven characters: ordered until the year 4453. */
export function idTimePart(now: number = Date.now()): string {
  return Math.floor(now / 1000)
    .toString(36)
    .padStart(TIME_PART_LENGTH, '0');
}

export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${ID_PREFIX[kind]}_${idTimePart(now)}${randomBase62(ID_BODY_LENGTH - TIME_PART_LENGTH)}`;
}

export function isIdOf(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIX[kind]}_`;
  return value.startsWith(prefix) && /^[0-9A-Za-z]+$/.test(value.slice(prefix.length));
}
