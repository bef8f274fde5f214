import type { z } from 'zod';
import { BILLING_EVENT_SCHEMAS } from '../billing/billing';
import { CHECKOUT_EVENT_SCHEMAS } from '../checkout/events';
import { OrganizationCreatedData, OrganizationSettingsUpdatedData } from '../gateway/organizations';
import { ProductArchivedData, ProductCreatedData, ProductRestoredData, ProductUpdatedData } from '../catalog/products';
import {
  CouponCreatedData,
  CouponUpdatedData,
  PromotionCodeCreatedData,
  PromotionCodeRedeemedData,
  PromotionCodeUpdatedData,
  RedemptionAssignedData,
  RedemptionReleasedData,
  RedemptionReservedData,
  RedemptionVoidedData,
} from '../promotions/promotions';
import { BILLING_PUBLIC_EVENTS, CHECKOUT_PUBLIC_EVENTS, PROMOTIONS_PUBLIC_EVENTS } from './public-events';
import { SWITCHING_EVENT_SCHEMAS } from '../billing/switching';
import { EINVOICE_EVENT_SCHEMAS } from '../billing/einvoices';
import { CREDITS_TOPIC, CREDIT_EVENT_SCHEMAS } from '../billing/credits';

/**
 * Every Kafka topic and the event types on it, as the AsyncAPI document (docs/asyncapi.json)
 * and the schema-compatibility snapshots (docs/event-schemas/) publish them. An event type is
 * published under its public dotted name when it has one (public-events.ts), else under its
 * internal PascalCase name.
 */
export interface TopicContract {
  topic: string;
  /** The service that owns the topic and alone writes to it. */
  service: string;
  description: string;
  /** Internal stream event type -> payload (`data`) schema; empty where no schema is published. */
  schemas: Readonly<Record<string, z.ZodType>>;
  publicTypes: Readonly<Record<string, string>>;
}

/**
 * The `schema_version` each event type is published with. An incompatible change of a `data`
 * schema (a removed or retyped field, a new required field) needs a new version here and a new
 * snapshot (`npm run contracts:asyncapi`); unlisted types are version 1.
 */
export const EVENT_SCHEMA_VERSIONS: Readonly<Record<string, number>> = {};

export const EVENT_TOPICS: readonly TopicContract[] = [
  {
    topic: 'catalog.events',
    service: 'catalog',
    description: 'Product events, stream `product-<id>`. Internal.',
    schemas: {
      ProductCreated: ProductCreatedData,
      ProductUpdated: ProductUpdatedData,
      ProductArchived: ProductArchivedData,
      ProductRestored: ProductRestoredData,
    },
    publicTypes: {},
  },
  {
    topic: 'checkout.events',
    service: 'checkout',
    description: 'Checkout sessions, orders and refunds, streams `checkout_session-<id>`, `refund-<id>`.',
    schemas: CHECKOUT_EVENT_SCHEMAS,
    publicTypes: CHECKOUT_PUBLIC_EVENTS,
  },
  {
    topic: 'billing.events',
    service: 'billing',
    description:
      'Customers, subscriptions, invoices, schedules, e-invoices, streams `customer-<id>`, `subscription-<id>`, `invoice-<id>`, `einvoice-<id>`.',
    schemas: {
      ...BILLING_EVENT_SCHEMAS,
      ...SWITCHING_EVENT_SCHEMAS,
      ...EINVOICE_EVENT_SCHEMAS,
    },
    publicTypes: BILLING_PUBLIC_EVENTS,
  },
  {
    topic: CREDITS_TOPIC,
    service: 'billing',
    description:
      "Customers' credit ledgers, stream `customer_credits-<customer id>`: grants, spends, take-backs, expiries and low-balance notices. On a topic of its own because spends come at volume (docs/decisions/0033-credit-events-on-their-own-topic.md).",
    schemas: CREDIT_EVENT_SCHEMAS,
    publicTypes: BILLING_PUBLIC_EVENTS,
  },
  {
    topic: 'promotions.events',
    service: 'promotions',
    description: 'Coupons, promotion codes and redemptions, streams `coupon-<id>`, `promotion_code-<id>`.',
    schemas: {
      CouponCreated: CouponCreatedData,
      CouponUpdated: CouponUpdatedData,
      PromotionCodeCreated: PromotionCodeCreatedData,
      PromotionCodeUpdated: PromotionCodeUpdatedData,
      RedemptionReserved: RedemptionReservedData,
      RedemptionAssigned: RedemptionAssignedData,
      PromotionCodeRedeemed: PromotionCodeRedeemedData,
      RedemptionReleased: RedemptionReleasedData,
      RedemptionVoided: RedemptionVoidedData,
    },
    publicTypes: PROMOTIONS_PUBLIC_EVENTS,
  },
  {
    topic: 'gateway.events',
    service: 'gateway',
    description:
      "Organizations and API keys, stream `organization-<id>`. Internal. Published payloads: the organization and its settings (the hosted pages' merchant); key events are not.",
    schemas: {
      OrganizationCreated: OrganizationCreatedData,
      OrganizationSettingsUpdated: OrganizationSettingsUpdatedData,
    },
    publicTypes: {},
  },
  {
    topic: 'notifications.events',
    service: 'notifications',
    description: 'Webhook endpoints and deliveries. Internal; payloads are not published.',
    schemas: {},
    publicTypes: {},
  },
];

/** One event type as it travels on a topic. */
export interface PublishedEventType {
  topic: string;
  /** `type` on the wire: the public dotted name, or the internal name. */
  type: string;
  internalType: string;
  schemaVersion: number;
  public: boolean;
  data: z.ZodType;
}

export function publishedEventTypes(): PublishedEventType[] {
  return EVENT_TOPICS.flatMap((topic) =>
    Object.entries(topic.schemas).map(([internalType, data]) => {
      const publicType = topic.publicTypes[internalType];
      return {
        topic: topic.topic,
        type: publicType ?? internalType,
        internalType,
        schemaVersion: EVENT_SCHEMA_VERSIONS[internalType] ?? 1,
        public: publicType !== undefined,
        data,
      };
    }),
  );
}

/** A topic is public when merchants' analytics may read it: it carries public event types. */
export const isPublicTopic = (topic: TopicContract) => Object.keys(topic.publicTypes).length > 0;

/** The committed snapshot of an event type's schema at its version, under docs/event-schemas/. */
export const eventSchemaSnapshotName = (event: Pick<PublishedEventType, 'type' | 'schemaVersion'>) =>
  `${event.type}.v${event.schemaVersion}.json`;
