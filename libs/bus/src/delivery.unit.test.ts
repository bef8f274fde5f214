import { z } from 'zod';
import {
  backoffDelay,
  deliver,
  type DeliveryContext,
  type RawMessage,
  parkAndLog,
  RefusedMessage,
  retryPolicy,
  StoppedError,
} from './delivery';
import { partitionOf } from './partition';
import { DLQ_HEADERS } from './types';

const event = {
  id: '5b0f4f4e-2a4b-4c1e-9d7a-0c6f1c2b3a4d',
  type: 'TestHappened',
  schema_version: 1,
  stream: 'k-1',
  stream_version: 1,
  global_position: 1,
  occurred_at: '2026-11-21T00:00:00.000Z',
  organization: 'org_1',
  environment: 'SANDBOX',
  data: {},
};
const raw = (value: string): RawMessage => ({ topic: 't', partition: 0, offset: '7', key: 'k-1', value, headers: {} });

function context(handler: DeliveryContext['handler']) {
  const slept: number[] = [];
  const parked: Array<Record<string, string>> = [];
  const ctx: DeliveryContext = {
    groupId: 'g',
    handler,
    retry: retryPolicy({ maxAttempts: 4, initialDelayMs: 100, maxDelayMs: 250 }),
    sleep: async (ms) => void slept.push(ms),
    park: async (_message, headers) => void parked.push(headers),
  };
  return { ctx, slept, parked };
}

describe('backoff', () => {
  it('doubles from the initial delay and stops at the cap', () => {
    const policy = retryPolicy({ initialDelayMs: 100, maxDelayMs: 250 });
    expect([1, 2, 3, 4].map((n) => backoffDelay(policy, n))).toEqual([100, 200, 250, 250]);
  });
});

describe('deliver', () => {
  it('hands a valid event to the handler once when it succeeds', async () => {
    const handled: string[] = [];
    const { ctx, slept, parked } = context(async (m) => void handled.push(m.value.id));
    await deliver(raw(JSON.stringify(event)), ctx);
    expect(handled).toEqual([event.id]);
    expect(slept).toEqual([]);
    expect(parked).toEqual([]);
  });

  it('waits the backoff between attempts and parks after the last one', async () => {
    const { ctx, slept, parked } = context(async () => {
      throw new Error('down');
    });
    await deliver(raw(JSON.stringify(event)), ctx);
    expect(slept).toEqual([100, 200, 250]);
    expect(parked).toEqual([
      expect.objectContaining({
        [DLQ_HEADERS.reason]: 'down',
        [DLQ_HEADERS.attempts]: '4',
        [DLQ_HEADERS.originalOffset]: '7',
      }),
    ]);
  });

  it('parks at once, without backoff, an event whose payload its schema refuses', async () => {
    let calls = 0;
    const { ctx, slept, parked } = context(async () => {
      calls++;
      z.object({ order_id: z.string() }).parse({});
    });
    await deliver(raw(JSON.stringify(event)), ctx);
    expect(calls).toBe(1);
    expect(slept).toEqual([]);
    expect(parked).toEqual([expect.objectContaining({ [DLQ_HEADERS.attempts]: '1' })]);
    expect(parked[0]![DLQ_HEADERS.reason]).toContain('order_id');
  });

  it('parks unparseable values without calling the handler', async () => {
    const { ctx, parked } = context(async () => {
      throw new Error('must not be called');
    });
    await deliver(raw('nope'), ctx);
    await deliver(raw('{"id":"x"}'), ctx);
    expect(parked.map((h) => h[DLQ_HEADERS.attempts])).toEqual(['0', '0']);
  });

  it('parks at once a message its handler refuses (RefusedMessage), with the reason', async () => {
    const { ctx, slept, parked } = context(async () => {
      throw new RefusedMessage('unknown_meter at events.0.meter');
    });
    await deliver(raw(JSON.stringify(event)), ctx);
    expect(slept).toEqual([]);
    expect(parked).toEqual([
      expect.objectContaining({ [DLQ_HEADERS.attempts]: '1', [DLQ_HEADERS.reason]: 'unknown_meter at events.0.meter' }),
    ]);
  });

  it("hands what the subscription's readValue reads, and parks what it refuses", async () => {
    const handled: unknown[] = [];
    const { ctx, parked } = context(async (message) => void handled.push(message.value));
    ctx.readValue = (json) => {
      const report = json as { events?: unknown[] };
      return Array.isArray(report.events) ? (report as never) : { refused: 'no events' };
    };
    await deliver(raw('{"events":[1,2]}'), ctx);
    await deliver(raw('{"id":"x"}'), ctx);
    expect(handled).toEqual([{ events: [1, 2] }]);
    expect(parked).toEqual([expect.objectContaining({ [DLQ_HEADERS.reason]: 'malformed: no events' })]);
  });

  it('gives up without parking when the consumer stops during a backoff', async () => {
    const { ctx, parked } = context(async () => {
      throw new Error('down');
    });
    ctx.sleep = async () => {
      throw new StoppedError();
    };
    await expect(deliver(raw(JSON.stringify(event)), ctx)).rejects.toBeInstanceOf(StoppedError);
    expect(parked).toEqual([]);
  });
});

describe('partitionOf', () => {
  it('is stable per key and spreads keys over the partitions', () => {
    expect(partitionOf('product-1', 3)).toBe(partitionOf('product-1', 3));
    const used = new Set(Array.from({ length: 50 }, (_, i) => partitionOf(`stream-${i}`, 3)));
    expect(used).toEqual(new Set([0, 1, 2]));
  });
});

describe('parkAndLog', () => {
  it('parks the message, then logs which one was parked and after how many attempts, without its reason', async () => {
    const parkedHeaders: Record<string, string>[] = [];
    const lines: Array<{ details: object; message: string }> = [];
    const park = parkAndLog(
      async (_raw, headers) => void parkedHeaders.push(headers),
      { error: (details, message) => void lines.push({ details, message }) },
      'billing',
    );
    const raw = { topic: 'checkout.events', partition: 2, offset: '41', key: 'k', value: '{}', headers: {} };
    await park(raw, { 'dlq-reason': 'duplicate key value: buyer@example.com', 'dlq-attempts': '5' });
    expect(parkedHeaders).toHaveLength(1);
    expect(lines).toEqual([
      {
        details: {
          component: 'bus',
          group: 'billing',
          topic: 'checkout.events',
          partition: 2,
          offset: '41',
          attempts: 5,
        },
        message: expect.stringContaining('checkout.events.dlq'),
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain('buyer@example.com');
  });
});
