import {
  BILLING_PUBLIC_EVENTS,
  CHECKOUT_PUBLIC_EVENTS,
  CustomerCreatedData,
  CustomerUpdatedData,
  CHECKOUT_TOPIC,
  CheckoutSessionCompletedData,
  CheckoutSessionExpiredData,
  type DomainEventEnvelope,
  OrderRefundedData,
  ProductArchivedData,
  ProductCreatedData,
  ProductRestoredData,
  ProductUpdatedData,
} from '@billing/contracts';
import { exactlyOnce } from '@billing/bus';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import { topicOf, type ServiceContext } from '@billing/runtime';
import { promotionCodeAggregate } from '../promotion-codes/aggregate';
import type { PromotionCodeCommand } from '../promotion-codes/decide';
import { tablesOf } from '../promotion-codes/read-model';
import type { ProductFacts } from '../validation/validate';
import { replicaTables, upsertCustomer } from './read-model';

export const CATALOG_TOPIC = topicOf('catalog');
export const BILLING_TOPIC = topicOf('billing');

/**
 * One consumer group for the three topics (one group join): products from `catalog.events`,
 * completed orders and redemption confirm/release/void from `checkout.events`, customers and
 * their names from `billing.events`. Each effect
 * commits with its inbox row, so a redelivered event changes nothing.
 */
export async function startConsumers(context: ServiceContext): Promise<Array<() => Promise<void>>> {
  const { store, infrastructure, now } = context;
  // The group is the service's schema: `promotions` in production, one per test schema.
  const groupId = store.tables.schema.replaceAll('"', '');
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: [CATALOG_TOPIC, CHECKOUT_TOPIC, BILLING_TOPIC],
    handler: exactlyOnce(store, groupId, (event, tx) => handle(store, tx, event, now()), { only: HANDLED_TYPES }),
  });
  return [() => subscription.stop()];
}

/** The events `handle` acts on; the consumer skips any other without a transaction. */
const HANDLED_TYPES = [
  'ProductCreated',
  'ProductUpdated',
  'ProductArchived',
  'ProductRestored',
  CHECKOUT_PUBLIC_EVENTS.CheckoutSessionCompleted,
  CHECKOUT_PUBLIC_EVENTS.CheckoutSessionExpired,
  CHECKOUT_PUBLIC_EVENTS.OrderRefunded,
  BILLING_PUBLIC_EVENTS.CustomerCreated,
  BILLING_PUBLIC_EVENTS.CustomerUpdated,
];

async function handle(store: EventStore, tx: EventStoreTransaction, event: DomainEventEnvelope, at: Date) {
  const schema = store.tables.schema;
  switch (event.type) {
    case 'ProductCreated': {
      const d = ProductCreatedData.parse(event.data);
      const facts: ProductFacts = {
        id: d.product_id,
        name: d.name,
        price: d.price,
        interval: d.interval,
        interval_count: d.interval_count,
      };
      return upsertProduct(tx, schema, event, facts, true);
    }
    case 'ProductUpdated': {
      const d = ProductUpdatedData.parse(event.data);
      return changeProduct(tx, schema, event, d.product_id, (p) => ({
        ...p,
        ...pick(d.changes, ['name', 'price', 'interval', 'interval_count']),
      }));
    }
    case 'ProductArchived':
      return changeProduct(tx, schema, event, ProductArchivedData.parse(event.data).product_id, undefined, false);
    case 'ProductRestored':
      return changeProduct(tx, schema, event, ProductRestoredData.parse(event.data).product_id, undefined, true);
    case CHECKOUT_PUBLIC_EVENTS.CheckoutSessionCompleted: {
      const d = CheckoutSessionCompletedData.parse(event.data);
      await tx.write(
        `INSERT INTO ${replicaTables(schema).orders}
           (order_id, organization, environment, session_id, customer_id, external_customer_id, customer_email, completed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (organization, environment, order_id) DO NOTHING`,
        [
          d.order_id,
          event.organization,
          event.environment,
          d.session_id,
          d.customer_id,
          d.external_customer_id,
          d.customer_email,
          d.completed_at ?? event.occurred_at,
        ],
      );
      if (!d.redemption_id) return;
      return onRedemption(store, tx, event, d.redemption_id, at, (target) => ({
        type: 'ConfirmRedemption',
        data: { ...target, orderId: d.order_id, customerId: d.customer_id, externalId: d.external_customer_id },
      }));
    }
    case CHECKOUT_PUBLIC_EVENTS.CheckoutSessionExpired: {
      const d = CheckoutSessionExpiredData.parse(event.data);
      if (!d.redemption_id) return;
      return onRedemption(store, tx, event, d.redemption_id, at, (target) => ({
        type: 'ReleaseRedemption',
        data: target,
      }));
    }
    case CHECKOUT_PUBLIC_EVENTS.OrderRefunded: {
      const d = OrderRefundedData.parse(event.data);
      if (!d.redemption_id) return;
      return onRedemption(store, tx, event, d.redemption_id, at, (target) => ({
        type: 'VoidRedemption',
        data: target,
      }));
    }
    case BILLING_PUBLIC_EVENTS.CustomerCreated:
    case BILLING_PUBLIC_EVENTS.CustomerUpdated: {
      // Only the names matter here; a payload without them (another producer's) is skipped,
      // not retried: no retry would give it a customer.
      const schemaOf = event.type === BILLING_PUBLIC_EVENTS.CustomerCreated ? CustomerCreatedData : CustomerUpdatedData;
      const parsed = schemaOf.safeParse(event.data);
      if (parsed.success) await upsertCustomer(tx, schema, event, parsed.data.object);
      return;
    }
    default:
      // Other event types of these topics are none of promotions' business.
      return;
  }
}

type Target = {
  promotionCodeId: string;
  organization: string;
  environment: DomainEventEnvelope['environment'];
  now: Date;
  redemptionId: string;
};

/**
 * Runs a redemption command on its promotion code's stream, in the inbox transaction. The
 * code's row is locked first so that effects on one code queue up instead of conflicting.
 * A redemption unknown in the event's organization and environment is ignored.
 */
async function onRedemption(
  store: EventStore,
  tx: EventStoreTransaction,
  event: DomainEventEnvelope,
  redemptionId: string,
  at: Date,
  command: (target: Target) => PromotionCodeCommand,
) {
  const t = tablesOf(store.tables.schema);
  const { rows } = await tx.query<{ promotion_code_id: string }>(
    `SELECT promotion_code_id FROM ${t.redemptions} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [redemptionId, event.organization, event.environment],
  );
  const codeId = rows[0]?.promotion_code_id;
  if (!codeId) return;
  await tx.query(`SELECT id FROM ${t.codes} WHERE id = $1 FOR UPDATE`, [codeId]);
  const target = {
    promotionCodeId: codeId,
    organization: event.organization,
    environment: event.environment,
    now: at,
    redemptionId,
  };
  await promotionCodeAggregate.handleInTransaction(tx, store, codeId, command(target), {
    organization: event.organization,
    environment: event.environment,
    occurredAt: at,
  });
}

async function upsertProduct(
  tx: EventStoreTransaction,
  schema: string,
  event: DomainEventEnvelope,
  facts: ProductFacts,
  active: boolean,
) {
  const table = replicaTables(schema).products;
  await tx.query(
    `INSERT INTO ${table} (id, organization, environment, active, stream_version, document)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (organization, environment, id) DO UPDATE SET active = EXCLUDED.active, stream_version = EXCLUDED.stream_version,
       document = EXCLUDED.document
     WHERE ${table}.stream_version < EXCLUDED.stream_version`,
    [facts.id, event.organization, event.environment, active, event.stream_version, JSON.stringify(facts)],
  );
}

/** Applies a later product event to the replica row; events older than the row are skipped. */
async function changeProduct(
  tx: EventStoreTransaction,
  schema: string,
  event: DomainEventEnvelope,
  productId: string,
  change?: (p: ProductFacts) => ProductFacts,
  active?: boolean,
) {
  const { rows } = await tx.query<{ document: ProductFacts; active: boolean; stream_version: number }>(
    `SELECT document, active, stream_version FROM ${replicaTables(schema).products}
     WHERE organization = $1 AND environment = $2 AND id = $3`,
    [event.organization, event.environment, productId],
  );
  const current = rows[0];
  if (!current || current.stream_version >= event.stream_version) return;
  await upsertProduct(
    tx,
    schema,
    event,
    change ? change(current.document) : current.document,
    active ?? current.active,
  );
}

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]])) as Partial<
    Pick<T, K>
  >;
}
