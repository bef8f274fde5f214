import { randomUUID } from 'node:crypto';
import type { Position } from '@eventstore/db-client';
import { eventually } from '@billing/testing';
import type { AppendOptions } from '../src';
import { EventStoreDbStreams } from '../src/eventstoredb';
import { streamContract } from './stream.contract';

const url = process.env.EVENTSTORE_URL?.trim();
const title = 'EventStore on EventStoreDB';
// The one suite that skips under CI=true too: no EventStoreDB server, nor a Docker engine to
// start one, exists where these tests run (docs/decisions/0012-eventstoredb.md).
if (!url) {
  console.warn(
    `SKIPPED "${title}": EVENTSTORE_URL is not set, and no EventStoreDB server or Docker engine exists on this machine (docs/decisions/0012-eventstoredb.md)`,
  );
}

const options = (expectedVersion: AppendOptions['expectedVersion']): AppendOptions => ({
  expectedVersion,
  organization: 'org_test',
  environment: 'SANDBOX',
  occurredAt: new Date('2026-11-21T08:00:00.000Z'),
});

(url ? describe : describe.skip)(title, () => {
  let streams: EventStoreDbStreams;

  beforeEach(() => {
    // Each test's streams are new: a prefix of its own on the shared server.
    streams = EventStoreDbStreams.connect(url!, { streamPrefix: `t${randomUUID().slice(0, 8)}-` });
  });
  afterEach(() => streams.close());

  streamContract(() => streams);

  it('delivers the log in order from the start, then only what follows a kept position', async () => {
    await streams.append(
      'a-1',
      [
        { type: 'A', data: {} },
        { type: 'B', data: {} },
      ],
      options(0),
    );
    await streams.append('b-1', [{ type: 'C', data: {} }], options(0));
    const seen: string[] = [];
    let kept: Position | undefined;
    const first = streams.subscribe(undefined, async (event, position) => {
      seen.push(`${event.stream}:${event.type}`);
      kept = position;
    });
    await eventually(() => expect(seen).toEqual(['a-1:A', 'a-1:B', 'b-1:C']));
    await first.stop();

    await streams.append('a-1', [{ type: 'D', data: {} }], options(2));
    const after: string[] = [];
    const second = streams.subscribe(kept, async (event) => void after.push(`${event.stream}:${event.type}`));
    await eventually(() => expect(after).toEqual(['a-1:D']));
    await second.stop();
  });
});
