import { EventEmitter } from 'node:events';
import type { ConsumerRunConfig } from 'kafkajs';
import { type RestartableConsumer, keepConsumerRunning } from './kafka-restart';

const EVENTS = { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' };

/** A consumer whose events the test emits, counting the starts asked of it. */
function fakeConsumer(failingStarts = 0) {
  const emitter = new EventEmitter();
  const calls = { connect: 0, run: 0, disconnect: 0 };
  let failures = failingStarts;
  const consumer = {
    events: EVENTS,
    on: (event: string, listener: (e: unknown) => void) => emitter.on(event, listener),
    connect: async () => {
      calls.connect++;
      if (failures-- > 0) throw new Error('broker not there yet');
    },
    run: async () => void calls.run++,
    disconnect: async () => void calls.disconnect++,
  } as unknown as RestartableConsumer;
  const emit = (event: string, payload: object = {}) => emitter.emit(event, { payload });
  return { consumer, calls, emit };
}

const run = {} as ConsumerRunConfig;
const quietLogger = { error: () => undefined };
/** Long enough for a restart that should not happen to have happened: for the tests of nothing done. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
/** Until the restarts the test waits for are done, however busy the machine (at most 5 s). */
async function until(done: () => boolean) {
  for (const deadline = Date.now() + 5000; !done() && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('keepConsumerRunning', () => {
  it('given a joined group, when kafkajs crashes without restarting, then the consumer connects and runs again', async () => {
    const { consumer, calls, emit } = fakeConsumer();
    const stop = new AbortController();
    keepConsumerRunning(consumer, run, { signal: stop.signal, logger: quietLogger, groupId: 'g', delayMs: () => 1 });
    emit(EVENTS.GROUP_JOIN);

    emit(EVENTS.CRASH, { error: new Error('Failed to find group coordinator'), restart: false });
    await until(() => calls.run === 1);
    await settle();

    expect(calls).toEqual({ connect: 1, run: 1, disconnect: 0 });
    stop.abort();
  });

  it('given a start that fails, when the broker comes back, then it keeps trying with the next pause', async () => {
    const { consumer, calls, emit } = fakeConsumer(2);
    const stop = new AbortController();
    const pauses: number[] = [];
    const delayMs = (n: number) => (pauses.push(n), 1);
    keepConsumerRunning(consumer, run, { signal: stop.signal, logger: quietLogger, groupId: 'g', delayMs });
    emit(EVENTS.GROUP_JOIN);

    emit(EVENTS.CRASH, { error: new Error('down'), restart: false });
    await until(() => calls.run === 1);
    await settle();

    expect(calls.connect).toBe(3);
    expect(calls.run).toBe(1);
    expect(pauses).toEqual([0, 1, 2]);
    stop.abort();
  });

  it('given a crash kafkajs restarts after itself, then nothing more is done', async () => {
    const { consumer, calls, emit } = fakeConsumer();
    const stop = new AbortController();
    keepConsumerRunning(consumer, run, { signal: stop.signal, logger: quietLogger, groupId: 'g', delayMs: () => 1 });
    emit(EVENTS.GROUP_JOIN);

    emit(EVENTS.CRASH, { error: new Error('retriable'), restart: true });
    await settle();

    expect(calls).toEqual({ connect: 0, run: 0, disconnect: 0 });
    stop.abort();
  });

  it('given no join yet, when the consumer crashes, then the start’s own failure stands and nothing restarts', async () => {
    const { consumer, calls, emit } = fakeConsumer();
    const stop = new AbortController();
    keepConsumerRunning(consumer, run, { signal: stop.signal, logger: quietLogger, groupId: 'g', delayMs: () => 1 });

    emit(EVENTS.CRASH, { error: new Error('session timeout out of bounds'), restart: false });
    await settle();

    expect(calls).toEqual({ connect: 0, run: 0, disconnect: 0 });
    stop.abort();
  });

  it('given a stop during the pause, when the pause ends, then the consumer is not started again', async () => {
    const { consumer, calls, emit } = fakeConsumer();
    const stop = new AbortController();
    keepConsumerRunning(consumer, run, { signal: stop.signal, logger: quietLogger, groupId: 'g', delayMs: () => 5 });
    emit(EVENTS.GROUP_JOIN);
    emit(EVENTS.CRASH, { error: new Error('down'), restart: false });

    stop.abort();
    await settle();

    expect(calls).toEqual({ connect: 0, run: 0, disconnect: 0 });
  });
});
