import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Position } from '@eventstore/db-client';
import type { StartedTestContainer } from 'testcontainers';
import { eventually } from '@billing/testing';
import type { AppendOptions } from '../src';
import { EventStoreDbStreams } from '../src/eventstoredb';
import { streamContract } from './stream.contract';

/** The server docker-compose.yml's `eventstore` profile runs, for testcontainers to start. */
const IMAGE = 'eventstore/eventstore:24.10';
const given = process.env.EVENTSTORE_URL?.trim();
const dockerAnswers = !given && spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 15_000 }).status === 0;
const title = 'EventStore on EventStoreDB';
// The one suite that skips under CI=true too: no EventStoreDB server, nor a Docker engine to
// start one, exists where these tests run (docs/decisions/0012-eventstoredb.md).
if (!given && !dockerAnswers) {
  console.warn(
    `SKIPPED "${title}": EVENTSTORE_URL is not set, and no Docker engine answers \`docker info\` for testcontainers to start ${IMAGE} (docs/decisions/0012-eventstoredb.md)`,
  );
}

/** EVENTSTORE_URL's server, or one testcontainers starts (and stops) for this file. */
async function startServer(): Promise<{ url: string; container?: StartedTestContainer }> {
  if (given) return { url: given };
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(IMAGE)
    .withEnvironment({ EVENTSTORE_INSECURE: 'true', EVENTSTORE_MEM_DB: 'true', EVENTSTORE_RUN_PROJECTIONS: 'None' })
    .withExposedPorts(2113)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113))
    .withStartupTimeout(120_000)
    .start();
  return { url: `esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`, container };
}

const options = (expectedVersion: AppendOptions['expectedVersion']): AppendOptions => ({
  expectedVersion,
  organization: 'org_test',
  environment: 'SANDBOX',
  occurredAt: new Date('2026-11-21T08:00:00.000Z'),
});

(given || dockerAnswers ? describe : describe.skip)(title, () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  let streams: EventStoreDbStreams;

  beforeAll(async () => {
    server = await startServer();
  }, 180_000);
  afterAll(() => server?.container?.stop());

  beforeEach(() => {
    // Each test's streams are new: a prefix of its own on the shared server.
    streams = EventStoreDbStreams.connect(server.url, { streamPrefix: `t${randomUUID().slice(0, 8)}-` });
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
