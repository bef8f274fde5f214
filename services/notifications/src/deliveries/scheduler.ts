import { type StreamAppend, handleCommand } from '@billing/eventstore';
import { type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import { endpointTables } from '../endpoints/read-model';
import { type DeliveryCommand, type RecordAttempt, deliveryAggregate } from './decide';
import { deliveryStream } from './delivery';
import { projectDeliveries, deliveryTables } from './read-model';
import { type TargetPolicy, targetPolicyFromConfig } from '../targets/address-policy';
import { type Resolve, createWebhookSender } from './send';
import { signWebhook } from './sign';

export interface SchedulerOptions {
  /** Deadline of one attempt. */
  timeoutMs: number;
  /** Attempts in flight in all, from the claim until the attempt is recorded. */
  concurrency: number;
  /** Requests in flight per endpoint, so that a slow endpoint holds at most this many slots. */
  perEndpoint: number;
  /**
   * Attempts in flight per organization, so that one organization's slow endpoints together
   * hold at most this many slots and the others always find some free.
   */
  perOrganization: number;
  /** How often the due deliveries are looked for when nothing wakes the scheduler. */
  pollMs: number;
  /** Where webhooks may go: `WEBHOOK_ALLOW_PRIVATE_TARGETS`. */
  policy: TargetPolicy;
  /** Resolves endpoint host names; the system's resolver unless a test gives one. */
  resolve?: Resolve;
}

export function schedulerOptions(config: ServiceContext['config']): SchedulerOptions {
  const number = (name: string, fallback: number) => positiveNumberSetting(config, name, fallback);
  return {
    timeoutMs: number('WEBHOOK_TIMEOUT_MS', 10_000),
    concurrency: number('WEBHOOK_CONCURRENCY', 64),
    perEndpoint: number('WEBHOOK_CONCURRENCY_PER_ENDPOINT', 8),
    perOrganization: number('WEBHOOK_CONCURRENCY_PER_ORGANIZATION', 32),
    pollMs: number('WEBHOOK_POLL_MS', 200),
    policy: targetPolicyFromConfig(config),
  };
}

interface Claimed {
  id: string;
  endpoint_id: string;
  organization: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  event_id: string;
  attempt_count: number;
  body: string;
  url: string;
  secret: string;
}

export interface Scheduler {
  /** Looks for due deliveries now (after new ones were scheduled, or the clock moved). */
  wake(): void;
  /** Takes no more deliveries and waits for the attempts in flight. */
  stop(): Promise<void>;
  /** Resolves once nothing due is left and nothing is in flight (tests, bench). */
  idle(): Promise<void>;
  /** Cancels the pending deliveries of deleted endpoints; resolves to how many. */
  cancelOrphans(): Promise<number>;
}

/** Deleting an endpoint cancels its deliveries; this sweep, by the injected clock, catches any a crash left. */
const ORPHAN_SWEEP_MS = 60_000;

/**
 * Sends due deliveries. Due means `next_attempt_at <= now()` by the service's clock. A delivery
 * is claimed with a lease (`lease_until`) in one UPDATE that re-checks the lease, so two
 * schedulers never send the same attempt; the attempt is then recorded with its number, and a
 * number recorded already changes nothing. A crash between the request and the record sends
 * that attempt again after the lease: receivers deduplicate on `webhook-id`.
 */
export function startScheduler(context: ServiceContext, options: SchedulerOptions): Scheduler {
  const { store, now, logger } = context;
  const schema = store.tables.schema;
  const t = { ...deliveryTables(schema), ...endpointTables(schema) };
  const perEndpoint = new Map<string, number>();
  const perOrganization = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let ticking = false;
  let again = false;
  let lastFound = 0;
  let lastOrphanSweep = Number.NEGATIVE_INFINITY;
  const sender = createWebhookSender({
    timeoutMs: options.timeoutMs,
    policy: options.policy,
    resolve: options.resolve,
  });

  const run = (delivery: Pick<Claimed, 'id' | 'organization' | 'environment'>, command: DeliveryCommand) =>
    handleCommand(store, deliveryStream(delivery.id), deliveryAggregate, command, {
      organization: delivery.organization,
      environment: delivery.environment,
      occurredAt: now(),
      project: (tx, events) => projectDeliveries(tx, schema, events),
    });

  /** Attempts waiting to be recorded, and whether a recording is under way. */
  const toRecord: Array<{ delivery: Claimed; command: RecordAttempt; done: (error?: unknown) => void }> = [];
  let recording = false;

  /**
   * Records an attempt together with those that finished meanwhile: one read of their streams,
   * one transaction with one append and one projection for all. Should that fail (a concurrent
   * replay or cancel moved a stream), each is recorded on its own, with the command's retries.
   */
  function record(delivery: Claimed, command: RecordAttempt): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      toRecord.push({ delivery, command, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!recording) void recordQueued();
    });
  }

  async function recordQueued(): Promise<void> {
    recording = true;
    try {
      while (toRecord.length > 0) {
        const batch = toRecord.splice(0, 200);
        try {
          await recordTogether(batch.map((entry) => ({ delivery: entry.delivery, command: entry.command })));
          for (const entry of batch) entry.done();
        } catch {
          for (const entry of batch) {
            await run(entry.delivery, entry.command).then(
              () => entry.done(),
              (error) => entry.done(error ?? new Error('not recorded')),
            );
          }
        }
      }
    } finally {
      recording = false;
    }
  }

  async function recordTogether(entries: Array<{ delivery: Claimed; command: RecordAttempt }>): Promise<void> {
    const streams = entries.map((entry) => deliveryStream(entry.delivery.id));
    const recorded = await store.readStreams(streams);
    const occurredAt = now();
    const appends: StreamAppend[] = [];
    entries.forEach(({ delivery, command }, index) => {
      const history = recorded.get(streams[index]!) ?? [];
      const state = history.reduce(deliveryAggregate.evolve, deliveryAggregate.initialState());
      const events = deliveryAggregate.decide(command, state);
      if (events.length === 0) return; // a stale claim: recorded already
      appends.push({
        stream: streams[index]!,
        events,
        options: {
          expectedVersion: history.at(-1)?.stream_version ?? 0,
          organization: delivery.organization,
          environment: delivery.environment,
          occurredAt,
        },
      });
    });
    if (appends.length === 0) return;
    await store.transaction(async (tx) => {
      const results = await tx.appendMany(appends);
      await projectDeliveries(
        tx,
        schema,
        results.flatMap((result) => result.events),
      );
    });
  }

  async function claim(limit: number, at: Date): Promise<Claimed[]> {
    // Each endpoint gets at most perEndpoint attempts in flight, and each organization at most
    // perOrganization, counting those already running.
    const endpoints = [...perEndpoint.keys()];
    const organizations = [...perOrganization.keys()];
    const lease = new Date(at.getTime() + options.timeoutMs + 60_000).toISOString();
    const { rows } = await store.database.query<Claimed>(
      `WITH running AS (SELECT * FROM unnest($2::text[], $6::int[]) AS r(endpoint_id, in_flight)),
       running_organizations AS (SELECT * FROM unnest($7::text[], $8::int[]) AS o(organization, in_flight)),
       by_endpoint AS (
         SELECT ranked.id, ranked.organization, ranked.next_attempt_at FROM (
           SELECT d.id, d.endpoint_id, d.organization, d.next_attempt_at,
                  row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS rank
           FROM ${t.deliveries} d JOIN ${t.endpoints} e ON e.id = d.endpoint_id
           WHERE d.status = 'PENDING' AND d.next_attempt_at <= $1
             AND (d.lease_until IS NULL OR d.lease_until <= $1)
             AND e.is_active AND NOT e.deleted
         ) ranked LEFT JOIN running r ON r.endpoint_id = ranked.endpoint_id
         WHERE ranked.rank <= $3 - coalesce(r.in_flight, 0)
       ),
       due AS (
         SELECT ranked.id FROM (
           SELECT b.id, b.organization, b.next_attempt_at,
                  row_number() OVER (PARTITION BY b.organization ORDER BY b.next_attempt_at, b.id) AS rank
           FROM by_endpoint b
         ) ranked LEFT JOIN running_organizations o ON o.organization = ranked.organization
         WHERE ranked.rank <= $9 - coalesce(o.in_flight, 0)
         ORDER BY ranked.next_attempt_at LIMIT $4
       )
       UPDATE ${t.deliveries} d SET lease_until = $5
       FROM due, ${t.endpoints} e, ${t.secrets} s
       WHERE d.id = due.id AND e.id = d.endpoint_id AND s.endpoint_id = d.endpoint_id
         AND d.status = 'PENDING' AND (d.lease_until IS NULL OR d.lease_until <= $1)
       RETURNING d.id, d.endpoint_id, d.organization, d.environment, d.event_id, d.attempt_count, d.body, e.url, s.secret`,
      [
        at.toISOString(),
        endpoints,
        options.perEndpoint,
        limit,
        lease,
        endpoints.map((id) => perEndpoint.get(id)!),
        organizations,
        organizations.map((id) => perOrganization.get(id)!),
        options.perOrganization,
      ],
    );
    return rows;
  }

  /** Sends, calls `sent` once the endpoint answered (or the attempt failed), then records the attempt. */
  async function attempt(delivery: Claimed, sent: () => void): Promise<void> {
    const attemptedAt = now();
    // The timestamp is for the receiver's replay check against its own clock: real time.
    const headers = signWebhook(delivery.secret, delivery.event_id, Math.floor(Date.now() / 1000), delivery.body);
    const result = await sender.send(delivery.url, delivery.environment, delivery.body, headers);
    sent();
    await record(delivery, {
      type: 'RecordAttempt',
      data: { deliveryId: delivery.id, attempt: delivery.attempt_count + 1, attemptedAt, ...result },
    });
  }

  async function cancelOrphans(): Promise<number> {
    lastOrphanSweep = now().getTime();
    const { rows } = await store.database.query<Pick<Claimed, 'id' | 'organization' | 'environment'>>(
      `SELECT d.id, d.organization, d.environment FROM ${t.deliveries} d JOIN ${t.endpoints} e ON e.id = d.endpoint_id
       WHERE d.status = 'PENDING' AND e.deleted`,
    );
    // An attempt in flight may still finish; its record is then ignored, as for any stale claim.
    for (const delivery of rows)
      await run(delivery, { type: 'CancelDelivery', data: { deliveryId: delivery.id, now: now() } });
    return rows.length;
  }

  const count = (counts: Map<string, number>, key: string, by: number) => {
    const value = (counts.get(key) ?? 0) + by;
    if (value > 0) counts.set(key, value);
    else counts.delete(key);
  };

  /**
   * The endpoint's and organization's slots are held while the request is out; the attempt
   * counts against `concurrency` until it is recorded. The lease keeps the delivery from being
   * claimed again in between.
   */
  function launch(delivery: Claimed) {
    count(perEndpoint, delivery.endpoint_id, 1);
    count(perOrganization, delivery.organization, 1);
    let slotsHeld = true;
    const releaseSlots = () => {
      if (!slotsHeld) return;
      slotsHeld = false;
      count(perEndpoint, delivery.endpoint_id, -1);
      count(perOrganization, delivery.organization, -1);
      wake();
    };
    const running: Promise<void> = attempt(delivery, releaseSlots)
      .catch((err) =>
        logger.error({ err, delivery: delivery.id }, 'webhook attempt not recorded; retried after its lease'),
      )
      .finally(() => {
        releaseSlots();
        inFlight.delete(running);
        wake();
      });
    inFlight.add(running);
  }

  async function tick(): Promise<void> {
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    try {
      do {
        again = false;
        const free = options.concurrency - inFlight.size;
        if (stopped || free <= 0) break;
        if (now().getTime() - lastOrphanSweep >= ORPHAN_SWEEP_MS) await cancelOrphans();
        const claimed = await claim(free, now());
        lastFound = claimed.length;
        for (const delivery of claimed) launch(delivery);
        if (claimed.length === free) again = true;
      } while (again && !stopped);
    } catch (err) {
      logger.error({ err }, 'webhook scheduler failed; retrying');
    } finally {
      ticking = false;
    }
  }

  function wake() {
    if (!stopped) void tick();
  }

  const timer = setInterval(wake, options.pollMs);
  timer.unref();
  wake();

  return {
    wake,
    cancelOrphans,
    async stop() {
      stopped = true;
      clearInterval(timer);
      while (ticking) await new Promise((resolve) => setTimeout(resolve, 5));
      await Promise.all([...inFlight]);
      sender.close();
    },
    async idle() {
      for (;;) {
        await tick();
        if (inFlight.size === 0 && lastFound === 0 && !ticking) return;
        await Promise.race([...inFlight, new Promise((resolve) => setTimeout(resolve, 10))]);
      }
    },
  };
}
