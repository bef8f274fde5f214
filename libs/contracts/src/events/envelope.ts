import { z } from 'zod';

export const Environment = z.enum(['SANDBOX', 'PRODUCTION']);
export type Environment = z.infer<typeof Environment>;

export const livemodeOf = (environment: Environment): boolean => environment === 'PRODUCTION';

/**
 * The envelope every domain event travels in, on the event store's read side and on Kafka.
 * It is a public, versioned interface: analytics consumers read it from `<service>.events`.
 */
export const DomainEventEnvelope = z
  .object({
    id: z.uuid().describe('Unique event id; consumers deduplicate on it'),
    type: z.string().min(1).describe('Event type, such as ProductCreated'),
    schema_version: z.number().int().min(1).describe('Version of the shape of `data` for this type'),
    stream: z.string().min(1).describe('Aggregate stream, `<type>-<id>`; also the Kafka message key'),
    stream_version: z.number().int().min(1).describe('Position of the event in its stream, from 1'),
    global_position: z.number().int().min(1).describe('Position in the service event log'),
    occurred_at: z.iso.datetime(),
    organization: z.string().min(1),
    environment: Environment,
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'DomainEvent' });
export type DomainEventEnvelope<Data = Record<string, unknown>> = Omit<z.infer<typeof DomainEventEnvelope>, 'data'> & {
  data: Data;
};

/** The same envelope with `data` narrowed to one event type's schema. */
export function domainEventOf<T extends string, D extends z.ZodType>(type: T, data: D, schemaVersion = 1) {
  return DomainEventEnvelope.extend({
    type: z.literal(type),
    schema_version: z.literal(schemaVersion),
    data,
  });
}
