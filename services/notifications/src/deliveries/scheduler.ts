import { type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import { type TargetPolicy, targetPolicyFromConfig } from '../targets/address-policy';
import { type Claimed, type ClaimLimits, type Held, claimDue, releaseLeases, stoppedEndpoints } from './claim';
import { deliveryAggregate } from './aggregate';
import { createAttemptRecorder } from './record';
import { endpointTables } from '../endpoints/read-model';
import { deliveryTables } from './read-model';
import { type Resolve, createWebhookSender } from './send';
import { signWebhook } from './sign';

export interface SchedulerOptions {
  /** Deadline of one attempt. */
  timeoutMs: number;
  /** Requests in flight in all. */
  concurrency: number;
  /** Requests in flight per endpoint, so that a slow endpoint holds at most this many slots. */
  perEndpoint: number;
  /**
   * Requests in flight per organization, so that one organization's slow endpoints together
   * hold at most this many slots and the others always find some free.
   */
  perOrganization: number;
  /**
   * How many rounds of each bound are claimed ahead into the local queue: at most
   * `claimAhead` times `perEndpoint` deliveries of one endpoint are held (claimed, not yet
   * recorded), and likewise per organization and in all.
   */
  claimAhead: number;
  /**
   * Time a lease must still have when a request starts, beyond the attempt's deadline: for its
   * record. It is also how long, past the attempts it covers, a delivery whose claimer crashed
   * waits before another claim sends it.
   */
  leaseMarginMs: number;
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
    claimAhead: number('WEBHOOK_CLAIM_AHEAD', 8),
    leaseMarginMs: number('WEBHOOK_LEASE_MARGIN_MS', 60_000),
    pollMs: number('WEBHOOK_POLL_MS', 200),
    policy: targetPolicyFromConfig(config),
  };
}

export interface Scheduler {
  /** Looks for due deliveries now (after new ones were scheduled, or the clock moved). */
  wake(): void;
  /** Takes no more deliveries, gives back the leases of those not started, waits for the rest. */
  stop(): Promise<void>;
  /** Resolves once nothing due is left and nothing is held (tests, bench). */
  idle(): Promise<void>;
  /** Cancels the pending deliveries of deleted endpoints; resolves to how many. */
  cancelOrphans(): Promise<number>;
}

/** Deleting an endpoint cancels its deliveries; this sweep, by the injected clock, catches any a crash left. */
const ORPHAN_SWEEP_MS = 60_000;

/**
 * Sends due deliveries. Due means `next_attempt_at <= now()` by the service's clock. Due
 * deliveries are claimed many at once (`./claim.ts`) with a lease (`lease_until`) long enough
 * for `claimAhead` rounds of requests, into a local queue per endpoint, and sent from there
 * within the concurrency bounds. A queued delivery whose lease would no longer cover its
 * attempt is dropped rather than sent, so two schedulers never send the same attempt at once.
 * The attempt is recorded with its number, and a number recorded already changes nothing. A
 * crash between the claim and the record sends that attempt after the lease (receivers
 * deduplicate on `webhook-id`). See docs/decisions/0014-webhook-claims.md.
 */
export function startScheduler(context: ServiceContext, options: SchedulerOptions): Scheduler {
  const { store, now, logger } = context;
  const t = { ...deliveryTables(store.tables.schema), ...endpointTables(store.tables.schema) };
  const limits: ClaimLimits = {
    perEndpoint: options.perEndpoint * options.claimAhead,
    perOrganization: options.perOrganization * options.claimAhead,
    total: options.concurrency * options.claimAhead,
  };
  const leaseMs = (options.claimAhead + 1) * options.timeoutMs + options.leaseMarginMs;
  const held: Held & { deliveries: Map<string, Claimed> } = {
    byEndpoint: new Map(),
    byOrganization: new Map(),
    total: 0,
    deliveries: new Map(),
  };
  const sending = { byEndpoint: new Map<string, number>(), byOrganization: new Map<string, number>(), total: 0 };
  /** Claimed deliveries not started yet, per endpoint, earliest due first. */
  const queues = new Map<string, Claimed[]>();
  /** Attempts from the request's start until they are recorded. */
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
  const { record } = createAttemptRecorder(context);

  const count = (counts: Map<string, number>, key: string, by: number) => {
    const value = (counts.get(key) ?? 0) + by;
    if (value > 0) counts.set(key, value);
    else counts.delete(key);
  };

  function hold(delivery: Claimed) {
    const mine = held.deliveries.get(delivery.id);
    if (mine) {
      // Our lease had expired by the clock and we claimed the delivery again: keep one copy.
      mine.lease_until = delivery.lease_until;
      return;
    }
    held.deliveries.set(delivery.id, delivery);
    count(held.byEndpoint, delivery.endpoint_id, 1);
    count(held.byOrganization, delivery.organization, 1);
    held.total++;
    const queue = queues.get(delivery.endpoint_id);
    if (queue) queue.push(delivery);
    else queues.set(delivery.endpoint_id, [delivery]);
  }

  function unhold(delivery: Claimed) {
    if (held.deliveries.get(delivery.id) !== delivery) return;
    held.deliveries.delete(delivery.id);
    count(held.byEndpoint, delivery.endpoint_id, -1);
    count(held.byOrganization, delivery.organization, -1);
    held.total--;
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

  /**
   * The endpoint's and organization's slots are held while the request is out; the delivery
   * stays held (and counts against the claim limits) until its attempt is recorded.
   */
  function launch(delivery: Claimed) {
    count(sending.byEndpoint, delivery.endpoint_id, 1);
    count(sending.byOrganization, delivery.organization, 1);
    sending.total++;
    let slotsHeld = true;
    const releaseSlots = () => {
      if (!slotsHeld) return;
      slotsHeld = false;
      count(sending.byEndpoint, delivery.endpoint_id, -1);
      count(sending.byOrganization, delivery.organization, -1);
      sending.total--;
      dispatch();
    };
    const running: Promise<void> = attempt(delivery, releaseSlots)
      .catch((err) =>
        logger.error({ err, delivery: delivery.id }, 'webhook attempt not recorded; retried after its lease'),
      )
      .finally(() => {
        releaseSlots();
        unhold(delivery);
        inFlight.delete(running);
        wake();
      });
    inFlight.add(running);
  }

  const canSend = (delivery: Claimed) =>
    sending.total < options.concurrency &&
    (sending.byEndpoint.get(delivery.endpoint_id) ?? 0) < options.perEndpoint &&
    (sending.byOrganization.get(delivery.organization) ?? 0) < options.perOrganization;

  /** Starts queued deliveries while slots are free, one endpoint after another in turn. */
  function dispatch() {
    if (stopped) return;
    let started = true;
    while (started && sending.total < options.concurrency) {
      started = false;
      for (const [endpointId, queue] of queues) {
        const next = queue[0];
        if (next && canSend(next)) {
          queue.shift();
          if (now().getTime() + options.timeoutMs + options.leaseMarginMs <= next.lease_until.getTime()) launch(next);
          else unhold(next); // its lease may run out during the attempt: another claim sends it
          started = true;
        }
        if (queue.length === 0) queues.delete(endpointId);
      }
    }
  }

  async function cancelOrphans(): Promise<number> {
    lastOrphanSweep = now().getTime();
    const { rows } = await store.database.query<Pick<Claimed, 'id' | 'organization' | 'environment'>>(
      `SELECT d.id, d.organization, d.environment FROM ${t.deliveries} d JOIN ${t.endpoints} e ON e.id = d.endpoint_id
       WHERE d.status = 'PENDING' AND e.deleted`,
    );
    // An attempt in flight may still finish; its record is then ignored, as for any stale claim.
    for (const { id, organization, environment } of rows) {
      const cancel = { type: 'CancelDelivery' as const, data: { deliveryId: id, now: now() } };
      await deliveryAggregate.handle(store, id, cancel, { organization, environment, occurredAt: now() });
    }
    await dropQueuedOfStoppedEndpoints();
    return rows.length;
  }

  /**
   * An endpoint deleted or deactivated since its deliveries were claimed (here or in another
   * process) gets none of those still queued; their leases are given back.
   */
  async function dropQueuedOfStoppedEndpoints(): Promise<void> {
    const gone = await stoppedEndpoints(store, [...queues.keys()]);
    const dropped = [...gone].flatMap((endpointId) => queues.get(endpointId) ?? []);
    for (const endpointId of gone) queues.delete(endpointId);
    for (const delivery of dropped) unhold(delivery);
    await releaseLeases(store, dropped, now());
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
        if (stopped) break;
        if (now().getTime() - lastOrphanSweep >= ORPHAN_SWEEP_MS) await cancelOrphans();
        else await dropQueuedOfStoppedEndpoints();
        if (held.total >= limits.total) break;
        const at = now();
        const room = limits.total - held.total;
        const claimed = await claimDue(store, held, limits, at, new Date(at.getTime() + leaseMs));
        lastFound = claimed.length;
        for (const delivery of claimed) hold({ ...delivery, lease_until: new Date(delivery.lease_until) });
        dispatch();
        if (claimed.length === room) again = true;
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
      const unsent = [...queues.values()].flat();
      queues.clear();
      for (const delivery of unsent) unhold(delivery);
      await releaseLeases(store, unsent, now()).catch((err) =>
        logger.error({ err }, 'webhook leases not given back; the deliveries wait for them to expire'),
      );
      await Promise.all([...inFlight]);
      sender.close();
    },
    async idle() {
      for (;;) {
        await tick();
        if (inFlight.size === 0 && held.total === 0 && lastFound === 0 && !ticking) return;
        await Promise.race([...inFlight, new Promise((resolve) => setTimeout(resolve, 10))]);
      }
    },
  };
}
