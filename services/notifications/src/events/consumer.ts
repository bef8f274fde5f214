import { type DomainEventEnvelope, WEBHOOK_DEDUPE_WINDOW_MS, newId } from '@billing/contracts';
import { exactlyOnce } from '@billing/bus';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import { type ServiceContext, topicOf } from '@billing/runtime';
import type { WebhookDeliveryScheduled } from '../deliveries/delivery';
import { deliveryStream } from '../deliveries/delivery';
import { claimDedupe, projectDeliveries } from '../deliveries/read-model';
import { endpointTables } from '../endpoints/read-model';
import { toWebhookEvent, webhookObjectOf } from './to-webhook-event';

/** The services whose public events become webhooks. */
export const SOURCE_TOPICS = [topicOf('checkout'), topicOf('billing'), topicOf('promotions')];

/**
 * Turns public events into scheduled deliveries, one per subscribed endpoint, in the inbox
 * transaction: a redelivered event schedules nothing twice. `onScheduled` wakes the sender.
 */
export async function startEventConsumer(
  context: ServiceContext,
  onScheduled: () => void,
): Promise<() => Promise<void>> {
  const { store, infrastructure, now } = context;
  // The group is the service's schema: `notifications` in production, one per test schema.
  const groupId = store.tables.schema.replaceAll('"', '');
  const handle = exactlyOnce(store, groupId, async (event, tx) => {
    await scheduleDeliveries(store, tx, event, now());
  });
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: SOURCE_TOPICS,
    handler: async (message) => {
      // Most messages are internal events or belong to tenants without endpoints: they are
      // skipped without a transaction, which keeps catching up on a topic's history cheap.
      if (!(await mayConcernAnEndpoint(store, message.value))) return;
      await handle(message);
      onScheduled();
    },
  });
  return () => subscription.stop();
}

async function mayConcernAnEndpoint(store: EventStore, envelope: DomainEventEnvelope): Promise<boolean> {
  if (!webhookObjectOf(envelope)) return false;
  const { rows } = await store.database.query(
    `SELECT 1 FROM ${endpointTables(store.tables.schema).endpoints}
     WHERE organization = $1 AND environment = $2 AND is_active AND NOT deleted LIMIT 1`,
    [envelope.organization, envelope.environment],
  );
  return rows.length > 0;
}

/** Active endpoints of the event's organization and environment that subscribe to its type. */
export async function scheduleDeliveries(
  store: EventStore,
  tx: EventStoreTransaction,
  envelope: DomainEventEnvelope,
  at: Date,
): Promise<number> {
  const event = toWebhookEvent(envelope);
  if (!event) return 0;
  const schema = store.tables.schema;
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM ${endpointTables(schema).endpoints}
     WHERE organization = $1 AND environment = $2 AND is_active AND NOT deleted
       AND ($3 = ANY(events) OR '*' = ANY(events))
     ORDER BY id`,
    [envelope.organization, envelope.environment, event.type],
  );
  const body = JSON.stringify(event);
  let scheduled = 0;
  for (const { id: endpointId } of rows) {
    if (!(await claimDedupe(tx, schema, endpointId, event.id, at, WEBHOOK_DEDUPE_WINDOW_MS))) continue;
    const deliveryId = newId('webhookDelivery');
    const scheduledEvent: WebhookDeliveryScheduled = {
      type: 'WebhookDeliveryScheduled',
      data: {
        delivery_id: deliveryId,
        endpoint_id: endpointId,
        event_id: event.id,
        event_type: event.type,
        body,
        created_at: at.toISOString(),
        next_attempt_at: at.toISOString(),
      },
    };
    const result = await tx.append(deliveryStream(deliveryId), [scheduledEvent], {
      expectedVersion: 0,
      organization: envelope.organization,
      environment: envelope.environment,
      occurredAt: at,
    });
    await projectDeliveries(tx, schema, result.events);
    scheduled++;
  }
  return scheduled;
}
