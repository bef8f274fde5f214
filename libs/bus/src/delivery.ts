import { DomainEventEnvelope } from '@billing/contracts';
import {
  type BatchHandler,
  type ConsumedMessage,
  DEFAULT_RETRY,
  DLQ_HEADERS,
  type MessageHandler,
  type RetryPolicy,
  type SubscribeOptions,
  type ValueRefused,
  dlqTopicOf,
} from './types';

/** A message as an adapter read it, before its value is known to be an event. */
export interface RawMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

export interface DeliveryContext {
  groupId: string;
  handler: MessageHandler;
  /** Takes several messages at once when given (`deliverBatch`). */
  batch?: BatchHandler;
  retry: RetryPolicy;
  /** Reads a value that is not a domain event (`SubscribeOptions.readValue`). */
  readValue?: SubscribeOptions['readValue'];
  /** Parks the message on `<topic>.dlq` with these extra headers. */
  park: (message: RawMessage, headers: Record<string, string>) => Promise<void>;
  /** Resolves after `ms`, or rejects with StoppedError when the consumer stops first. */
  sleep: (ms: number) => Promise<void>;
}

/**
 * `park`, and a log line saying so: a parked message is work the consumer did not do, and
 * nothing else tells. The line names the message, not why: the reason (an error's message may
 * quote a value) stays in the parked message's `dlq-reason` header.
 */
export function parkAndLog(
  park: DeliveryContext['park'],
  logger: { error: (details: object, message: string) => void },
  groupId: string,
): DeliveryContext['park'] {
  return async (raw, headers) => {
    await park(raw, headers);
    logger.error(
      {
        component: 'bus',
        group: groupId,
        topic: raw.topic,
        partition: raw.partition,
        offset: raw.offset,
        attempts: Number(headers[DLQ_HEADERS.attempts] ?? 0),
      },
      `message parked on ${dlqTopicOf(raw.topic)}: its handler failed every attempt, or it is no event`,
    );
  };
}

export class StoppedError extends Error {
  constructor() {
    super('consumer stopped');
    this.name = 'StoppedError';
  }
}

export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  return { ...DEFAULT_RETRY, ...overrides };
}

/** Exponential backoff: the first retry waits initialDelayMs, each next one twice as long, capped. */
export function backoffDelay(policy: RetryPolicy, failedAttempt: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (failedAttempt - 1));
}

function parse(raw: RawMessage, readValue = readDomainEvent): ConsumedMessage | string {
  let json: unknown;
  try {
    json = JSON.parse(raw.value);
  } catch {
    return 'malformed: value is not JSON';
  }
  const value = readValue(json);
  if (isRefused(value)) return `malformed: ${value.refused}`;
  return { ...raw, value };
}

function readDomainEvent(json: unknown): DomainEventEnvelope | ValueRefused {
  const result = DomainEventEnvelope.safeParse(json);
  return result.success
    ? result.data
    : { refused: `not a domain event (${result.error.issues[0]?.message ?? 'invalid'})` };
}

const isRefused = (value: unknown): value is ValueRefused =>
  typeof value === 'object' && value !== null && typeof (value as ValueRefused).refused === 'string';

/**
 * Hands one message to the handler, retrying with backoff; a message that cannot be parsed,
 * or that fails every attempt, is parked on the DLQ so the partition moves on. Resolves when
 * the message is done with (handled or parked); rejects only with StoppedError.
 */
export async function deliver(raw: RawMessage, context: DeliveryContext): Promise<void> {
  const message = parse(raw, context.readValue);
  if (typeof message === 'string') {
    await context.park(raw, dlqHeaders(raw, context.groupId, message, 0));
    return;
  }
  let lastError: unknown;
  for (let attempt = 1; attempt <= context.retry.maxAttempts; attempt++) {
    try {
      await context.handler(message);
      return;
    } catch (error) {
      if (error instanceof StoppedError) throw error;
      lastError = error;
      if (isPermanent(error)) {
        await context.park(raw, dlqHeaders(raw, context.groupId, reasonOf(error), attempt));
        return;
      }
      if (attempt < context.retry.maxAttempts) await context.sleep(backoffDelay(context.retry, attempt));
    }
  }
  await context.park(raw, dlqHeaders(raw, context.groupId, reasonOf(lastError), context.retry.maxAttempts));
}

/** Messages a batch handler is given at most at once. */
export const MAX_BATCH = 100;

/**
 * Hands messages of one partition over in order, each counted as done (`onDone`) once handled
 * or parked. With a batch handler, all of them at once first: if that fails (or a message is not
 * an event), one by one through `deliver`, so a poison message is retried and parked alone.
 * Rejects only with StoppedError; the messages not yet done are left for redelivery, as they
 * are when `active` turns false.
 */
export async function deliverBatch(
  raws: RawMessage[],
  context: DeliveryContext,
  onDone: (raw: RawMessage) => void,
  /** Checked before each message handed over alone: false once the partition is no longer ours. */
  active: () => boolean = () => true,
): Promise<void> {
  if (context.batch && raws.length > 1) {
    const messages = raws.map((raw) => parse(raw, context.readValue));
    if (messages.every((m): m is ConsumedMessage => typeof m !== 'string')) {
      try {
        await context.batch(messages);
        for (const raw of raws) onDone(raw);
        return;
      } catch (error) {
        if (error instanceof StoppedError) throw error;
        // Nothing of the batch was kept: one by one below.
      }
    }
  }
  for (const raw of raws) {
    if (!active()) return;
    await deliver(raw, context);
    onDone(raw);
  }
}

/** A handler's failure that no retry can mend (a message that says something impossible): parked at once. */
export class RefusedMessage extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedMessage';
  }
}

/**
 * A payload its schema refuses (a zod error) fails the same way on every try: it is parked at
 * once instead of holding its partition through the backoff.
 */
const isPermanent = (error: unknown) =>
  error instanceof Error && (error.name === 'ZodError' || error instanceof RefusedMessage);

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function dlqHeaders(raw: RawMessage, groupId: string, reason: string, attempts: number): Record<string, string> {
  return {
    ...raw.headers,
    [DLQ_HEADERS.reason]: reason.slice(0, 1000),
    [DLQ_HEADERS.originalTopic]: raw.topic,
    [DLQ_HEADERS.originalPartition]: String(raw.partition),
    [DLQ_HEADERS.originalOffset]: raw.offset,
    [DLQ_HEADERS.consumerGroup]: groupId,
    [DLQ_HEADERS.attempts]: String(attempts),
  };
}

/** A sleep that a stop interrupts, so shutdown never waits out a long backoff. */
export function stoppableSleep(signal: AbortSignal) {
  return (ms: number) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(new StoppedError());
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(new StoppedError());
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
}
