import { CREDITS_TOPIC, type DomainEventEnvelope, WEBHOOK_DEDUPE_WINDOW_MS, newId } from '@billing/contracts';
import { type ConsumedMessage, recordInInbox } from '@billing/bus';
import type { EventStore, EventStoreTransaction, RecordedEvent, StreamAppend } from '@billing/eventstore';
import { type ServiceContext, topicOf } from '@billing/runtime';
import type { WebhookDeliveryScheduled } from '../deliveries/delivery';
import { deliveryStream } from '../deliveries/delivery';
import { claimDedupes, projectDeliveries } from '../deliveries/read-model';
import { endpointTables } from '../endpoints/read-model';
import { type PublicEvent, storePublicEventsCte } from './read-model';
import { toWebhookEvent } from './to-webhook-event';

/** The services whose public events become webhooks. */
export const SOURCE_TOPICS = [topicOf('checkout'), topicOf('billing'), CREDITS_TOPIC, topicOf('promotions')];

/** An active endpoint as the consumer matches events against it. */
interface ActiveEndpoint {
  id: string;
  organization: string;
  environment: string;
  events: string[];
}

/** A public event for merchants and the endpoints that subscribe to it. */
interface Concerned extends PublicEvent {
  endpointIds: string[];
}

/**
 * Keeps every public event for the organization's events list, and turns them into scheduled
 * deliveries, one per subscribed endpoint, in the inbox transaction: a redelivered event
 * schedules nothing twice. `onScheduled` wakes the sender.
 *
 * Messages come one at a time or in batches (one partition's, in order). A batch with public
 * events costs one statement that stores them (`ON CONFLICT DO NOTHING`, so a redelivery stores
 * nothing twice) and reads the endpoints of their organizations, and, if any event concerns one,
 * one transaction: one inbox INSERT, one dedupe claim, one append of every delivery and one
 * projection. Events no endpoint subscribes to are skipped without a transaction, which keeps
 * catching up on a topic's history cheap.
 */
export async function startEventConsumer(
  context: ServiceContext,
  onScheduled: () => void,
): Promise<() => Promise<void>> {
  const { store, infrastructure, now } = context;
  // The group is the service's schema: `notifications` in production, one per test schema.
  const groupId = store.tables.schema.replaceAll('"', '');
  const consume = async (messages: ConsumedMessage[]) => {
    const events = publicEventsOf(messages);
    if (events.length === 0) return;
    const concerned = await storedAndConcerned(store, events, now());
    if (concerned.length === 0) return;
    const scheduled = await store.transaction(async (tx) => {
      const ids = concerned.map((c) => c.envelope.id);
      const fresh = await recordInInbox(tx, store, groupId, ids);
      const left = new Set(fresh);
      return scheduleAll(
        store,
        tx,
        concerned.filter((c) => left.delete(c.envelope.id)),
        now(),
      );
    });
    if (scheduled > 0) onScheduled();
  };
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: SOURCE_TOPICS,
    handler: Object.assign((message: ConsumedMessage) => consume([message]), { batch: consume }),
  });
  return () => subscription.stop();
}

/** The messages that are public events, in their webhook form, in order. */
function publicEventsOf(messages: ConsumedMessage[]): PublicEvent[] {
  const events: PublicEvent[] = [];
  for (const { value: envelope } of messages) {
    const event = toWebhookEvent(envelope);
    if (event) events.push({ envelope, event, body: JSON.stringify(event) });
  }
  return events;
}

/**
 * Stores the public events for the events list and answers those with at least one active
 * endpoint subscribed, in order: one statement, the store a CTE of the endpoints' read.
 */
async function storedAndConcerned(store: EventStore, events: PublicEvent[], receivedAt: Date): Promise<Concerned[]> {
  const endpoints = await activeEndpoints(
    store,
    events.map((e) => e.envelope),
    storePublicEventsCte(store.tables.schema, events, receivedAt),
  );
  if (endpoints.length === 0) return [];
  const concerned: Concerned[] = [];
  for (const { envelope, event, body } of events) {
    const endpointIds = endpoints
      .filter(
        (e) =>
          e.organization === envelope.organization &&
          e.environment === envelope.environment &&
          (e.events.includes(event.type) || e.events.includes('*')),
      )
      .map((e) => e.id);
    if (endpointIds.length > 0) concerned.push({ envelope, event, body, endpointIds });
  }
  return concerned;
}

/** Active endpoints of the organizations and environments of `envelopes`, by id, after `first`. */
async function activeEndpoints(
  store: EventStore,
  envelopes: DomainEventEnvelope[],
  first: { cte: string; values: unknown[] } | null,
): Promise<ActiveEndpoint[]> {
  const tenants = [...new Set(envelopes.map((e) => `${e.organization}\u0000${e.environment}`))].map((t) =>
    t.split('\u0000'),
  );
  const at = (first?.values.length ?? 0) + 1;
  const { rows } = await store.database.query<ActiveEndpoint>(
    `${first ? `WITH ${first.cte} ` : ''}SELECT e.id, e.organization, e.environment, e.events
     FROM ${endpointTables(store.tables.schema).endpoints} e
     JOIN unnest($${at}::text[], $${at + 1}::text[]) AS t(organization, environment)
       ON e.organization = t.organization AND e.environment = t.environment
     WHERE e.is_active AND NOT e.deleted
     ORDER BY e.id`,
    [...(first?.values ?? []), tenants.map((t) => t[0]), tenants.map((t) => t[1])],
  );
  return rows;
}

/**
 * Schedules a delivery of each event to each of its endpoints, unless the same event id was
 * scheduled for that endpoint within the dedupe window. Returns how many were scheduled.
 */
async function scheduleAll(
  store: EventStore,
  tx: EventStoreTransaction,
  concerned: Concerned[],
  at: Date,
): Promise<number> {
  if (concerned.length === 0) return 0;
  const schema = store.tables.schema;
  const pairs = concerned.flatMap((c) => c.endpointIds.map((endpointId) => ({ endpointId, concerned: c })));
  const claimed = await claimDedupes(
    tx,
    schema,
    pairs.map((p) => ({ endpointId: p.endpointId, eventId: p.concerned.event.id })),
    at,
    WEBHOOK_DEDUPE_WINDOW_MS,
  );
  const appends: StreamAppend[] = [];
  for (const { endpointId, concerned: c } of pairs) {
    if (!claimed.delete(`${endpointId}\u0000${c.event.id}`)) continue;
    const deliveryId = newId('webhookDelivery');
    const scheduledEvent: WebhookDeliveryScheduled = {
      type: 'WebhookDeliveryScheduled',
      data: {
        delivery_id: deliveryId,
        endpoint_id: endpointId,
        event_id: c.event.id,
        event_type: c.event.type,
        body: c.body,
        created_at: at.toISOString(),
        next_attempt_at: at.toISOString(),
      },
    };
    appends.push({
      stream: deliveryStream(deliveryId),
      events: [scheduledEvent],
      options: {
        expectedVersion: 0,
        organization: c.envelope.organization,
        environment: c.envelope.environment,
        occurredAt: at,
      },
    });
  }
  if (appends.length === 0) return 0;
  const results = await tx.appendMany(appends);
  const events: RecordedEvent[] = results.flatMap((r) => r.events);
  await projectDeliveries(tx, schema, events);
  return appends.length;
}
