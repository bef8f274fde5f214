import {
  type DomainEventEnvelope,
  PUBLIC_EVENT_TYPES,
  type PublicEventType,
  WEBHOOK_DATA_FIELDS,
  WEBHOOK_OBJECT_SCHEMAS,
  type WebhookEvent,
  inSchemaOrder,
  livemodeOf,
  webhookEventId,
} from '@billing/contracts';

const isPublic = (type: string): type is PublicEventType => (PUBLIC_EVENT_TYPES as readonly string[]).includes(type);

type WebhookObject = Record<string, unknown> & { id: string };

/**
 * The resource a public event carries for merchants: producers put it, as the public API shows
 * it, in `data.object`. Internal (PascalCase) events and public ones without an object give
 * undefined. Cheap: the consumer asks this of every message on its topics.
 */
export function webhookObjectOf(envelope: DomainEventEnvelope): WebhookObject | undefined {
  if (!isPublic(envelope.type)) return undefined;
  const object = envelope.data.object as (Record<string, unknown> & { id?: unknown }) | undefined;
  if (!object || typeof object !== 'object' || typeof object.id !== 'string') return undefined;
  return object as WebhookObject;
}

/** A public domain event as merchants receive it, or undefined when it is not for merchants. */
export function toWebhookEvent(envelope: DomainEventEnvelope): WebhookEvent | undefined {
  const object = webhookObjectOf(envelope);
  if (!object || !isPublic(envelope.type)) return undefined;
  const version = typeof object.updated_at === 'string' ? object.updated_at : envelope.occurred_at;
  return {
    id: webhookEventId(envelope.type, object.id, version),
    type: envelope.type,
    created_at: envelope.occurred_at,
    livemode: livemodeOf(envelope.environment),
    // Keys in the documented order (`object`, `id`, ...): the producer's events come back from jsonb sorted.
    data: {
      object: inSchemaOrder(WEBHOOK_OBJECT_SCHEMAS[envelope.type] as never, object) as WebhookEvent['data']['object'],
      ...previousAttributesOf(envelope),
      ...dataFieldsOf(envelope.type, envelope.data),
    },
  };
}

/** The fields the type carries beside `object` (`WEBHOOK_DATA_FIELDS`), from the event's data. */
function dataFieldsOf(type: PublicEventType, data: Record<string, unknown>): Record<string, unknown> {
  const names = Object.keys(WEBHOOK_DATA_FIELDS[type] ?? {});
  return Object.fromEntries(names.filter((name) => name in data).map((name) => [name, data[name]]));
}

/** A plan switch's `subscription.updated` says what the plan was (Stripe's `previous_attributes`). */
function previousAttributesOf(envelope: DomainEventEnvelope): { previous_attributes?: Record<string, unknown> } {
  const previous = envelope.data.previous_attributes;
  return previous && typeof previous === 'object' ? { previous_attributes: previous as Record<string, unknown> } : {};
}
