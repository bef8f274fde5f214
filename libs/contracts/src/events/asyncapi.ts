import { z } from 'zod';
import { EVENT_TOPICS, type PublishedEventType, isPublicTopic, publishedEventTypes } from './event-catalog';
import { USAGE_TOPIC, UsageTopicMessage } from '../billing/usage';
import { DomainEventEnvelope, domainEventOf } from './envelope';

export type JsonSchema = Record<string, unknown>;

/** The JSON Schema dialect of every payload: what ajv and most tools validate out of the box. */
export const EVENT_SCHEMA_FORMAT = 'application/schema+json;version=draft-07';

/**
 * A message's value as a standalone draft-07 JSON Schema (named sub-schemas under
 * `definitions`). Objects are left open (no `additionalProperties: false`): a tolerant reader
 * keeps working when a compatible version adds an optional field.
 */
export function eventJsonSchema(event: Pick<PublishedEventType, 'type' | 'schemaVersion' | 'data'>): JsonSchema {
  return openSchema(domainEventOf(event.type, event.data, event.schemaVersion));
}

function openSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, {
    target: 'draft-7',
    io: 'output',
    unrepresentable: 'any',
    override: (ctx) => {
      if (ctx.jsonSchema.additionalProperties === false) delete ctx.jsonSchema.additionalProperties;
    },
  }) as JsonSchema;
}

/** CloudEvents Kafka protocol binding, binary mode: the attributes travel as headers. */
export const CLOUD_EVENT_HEADERS_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['ce_id', 'ce_type', 'ce_source', 'ce_time', 'ce_specversion', 'content-type'],
  properties: {
    ce_id: { type: 'string', description: 'The event id; equals `id` of the value' },
    ce_type: { type: 'string', description: 'The event type; equals `type` of the value' },
    ce_source: { type: 'string', description: 'The publishing service, `/<service>` (such as `/billing`)' },
    ce_time: { type: 'string', format: 'date-time', description: 'Equals `occurred_at` of the value' },
    ce_specversion: { const: '1.0' },
    ce_subject: { type: 'string', description: 'The aggregate stream; equals the message key' },
    'content-type': { const: 'application/json' },
  },
};

const KEY_BINDING = {
  kafka: {
    key: {
      type: 'string',
      description: 'The aggregate stream id (`<type>-<id>`): one aggregate, one partition, in order',
    },
    bindingVersion: '0.5.0',
  },
};

function messageOf(event: PublishedEventType) {
  return {
    name: event.type,
    title: event.type,
    summary: event.public
      ? `Public event ${event.type} (internal ${event.internalType}), schema_version ${event.schemaVersion}`
      : `Internal event ${event.type}, schema_version ${event.schemaVersion}`,
    contentType: 'application/json',
    headers: CLOUD_EVENT_HEADERS_SCHEMA,
    payload: { schemaFormat: EVENT_SCHEMA_FORMAT, schema: eventJsonSchema(event) },
    bindings: KEY_BINDING,
    'x-schema-version': event.schemaVersion,
    'x-public': event.public,
  };
}

const ANY_INTERNAL_EVENT = 'internal_event';
const USAGE_REPORT = 'usage_report';

/** The usage topic: written by merchants who report usage at volume, read by billing (docs/usage.md). */
function usageTopic() {
  const message = {
    name: USAGE_REPORT,
    title: 'A report of usage events',
    summary: 'The events of one report, as POST /v1/usage_events takes them, and the tenant they are for',
    contentType: 'application/json',
    payload: { schemaFormat: EVENT_SCHEMA_FORMAT, schema: openSchema(UsageTopicMessage) },
    bindings: {
      kafka: {
        key: { type: 'string', description: 'Any; the customer id keeps its events in order' },
        bindingVersion: '0.5.0',
      },
    },
  };
  const channel = {
    address: USAGE_TOPIC,
    title: USAGE_TOPIC,
    description:
      'Usage events reported at volume: each message up to 1,000 events, stored once per id as the API stores them; a message that is malformed or names an unknown meter or customer is parked on usage.events.dlq. Read by billing. See docs/usage.md.',
    messages: { [USAGE_REPORT]: { $ref: `#/components/messages/${USAGE_REPORT}` } },
    bindings: { kafka: { partitions: 3, bindingVersion: '0.5.0' } },
    'x-visibility': 'public',
  };
  const operation = {
    action: 'send',
    channel: { $ref: `#/channels/${USAGE_TOPIC}` },
    summary: `Report usage on ${USAGE_TOPIC}, under the deployment's topic prefix`,
    messages: [{ $ref: `#/channels/${USAGE_TOPIC}/messages/${USAGE_REPORT}` }],
  };
  return { message, channel, operation };
}

/**
 * The AsyncAPI 3 document of every topic, generated from the zod schemas: committed as
 * docs/asyncapi.json (`npm run contracts:asyncapi`) and served by the gateway.
 */
export function asyncApiDocument() {
  const events = publishedEventTypes();
  const messages: Record<string, unknown> = {};
  for (const event of events) messages[event.type] = messageOf(event);
  messages[ANY_INTERNAL_EVENT] = {
    name: ANY_INTERNAL_EVENT,
    title: 'Internal event (payload not published)',
    contentType: 'application/json',
    headers: CLOUD_EVENT_HEADERS_SCHEMA,
    payload: { schemaFormat: EVENT_SCHEMA_FORMAT, schema: openSchema(DomainEventEnvelope) },
    bindings: KEY_BINDING,
  };
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  for (const topic of EVENT_TOPICS) {
    const types = events.filter((e) => e.topic === topic.topic).map((e) => e.type);
    const names = types.length > 0 ? types : [ANY_INTERNAL_EVENT];
    channels[topic.topic] = {
      address: topic.topic,
      title: topic.topic,
      description: `${topic.description} Written by ${topic.service}. See docs/topics.md.`,
      messages: Object.fromEntries(names.map((name) => [name, { $ref: `#/components/messages/${name}` }])),
      bindings: { kafka: { partitions: 3, bindingVersion: '0.5.0' } },
      'x-visibility': isPublicTopic(topic) ? 'public' : 'internal',
    };
    operations[`consume-${topic.topic}`] = {
      action: 'receive',
      channel: { $ref: `#/channels/${topic.topic}` },
      summary: `Read ${topic.topic}; deduplicate on \`id\` (delivery is at-least-once)`,
      messages: names.map((name) => ({ $ref: `#/channels/${topic.topic}/messages/${name}` })),
    };
  }
  const usage = usageTopic();
  messages[USAGE_REPORT] = usage.message;
  channels[USAGE_TOPIC] = usage.channel;
  operations[`produce-${USAGE_TOPIC}`] = usage.operation;
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Billing platform events',
      version: '1.0.0',
      description:
        'Each service publishes its event log to `<service>.events`, keyed by aggregate stream id. ' +
        'The value is the JSON DomainEvent envelope; the CloudEvents attributes are Kafka headers (binary mode). ' +
        'Generated from the zod schemas in libs/contracts: do not edit by hand.',
    },
    defaultContentType: 'application/json',
    servers: {
      kafka: { host: 'localhost:9092', protocol: 'kafka', description: "The deployment's broker (KAFKA_BROKERS)" },
    },
    channels,
    operations,
    components: { messages },
  };
}
