import {
  type BuyerNames,
  CUSTOMER_LIMITS,
  type Customer,
  EXTERNAL_ID_PATTERN,
  ResolveCustomerBody,
  type ResolvedCustomer,
  type TestClock,
  newId,
} from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, callerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { startStream } from '../shared/commands';
import { liveSubscriptions } from '../subscriptions/queries';
import { findTestClock } from '../test-clocks/read-model';
import { customerAggregate } from './aggregate';
import { externalIdHolder, findCustomer } from './queries';

const isUniqueViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === '23505';

/** A concurrent creator of the same email or external id wins; the loser finds its customer. */
const CREATE_ATTEMPTS = 3;

/**
 * The customer the buyer's names point to, by the spec's precedence: `customer_id`, then
 * `external_id`, then `email`. A name that matches nobody gives way to the next.
 */
export async function findBuyer(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  names: BuyerNames,
): Promise<Customer | undefined> {
  const lookups = [
    { by: 'id', value: names.customer_id },
    { by: 'external_id', value: names.external_id },
    { by: 'email', value: names.email },
  ] as const;
  for (const { by, value } of lookups) {
    if (value === undefined) continue;
    const customer = await findCustomer(sql, schema, tenant, { by, value });
    if (customer) return customer;
  }
  return undefined;
}

/**
 * The buyer's customer, created with the email, name and external id when nobody matches.
 * Creation races (a concurrent resolve, or billing provisioning a paid checkout) end on the
 * read model's unique indexes; the loser reads the winner's customer.
 */
export async function findOrCreateBuyer(
  store: EventStore,
  tenant: Tenant,
  buyer: BuyerNames & { email: string; name?: string; testClock?: TestClock },
  now: Date,
): Promise<{ customer: Customer; created: boolean }> {
  const { schema } = store.tables;
  for (let attempt = 1; ; attempt++) {
    const found = await findBuyer(store.database, schema, tenant, buyer);
    if (found) return { customer: found, created: false };
    try {
      return { customer: await createBuyer(store, tenant, buyer, now), created: true };
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= CREATE_ATTEMPTS) throw error;
    }
  }
}

async function createBuyer(
  store: EventStore,
  tenant: Tenant,
  buyer: { email: string; name?: string; external_id?: string; testClock?: TestClock },
  now: Date,
): Promise<Customer> {
  const { schema } = store.tables;
  const customerId = newId('customer');
  // Sandbox: a customer made for a session on a test clock lives on it from its creation.
  if (buyer.testClock) now = new Date(buyer.testClock.frozen_time);
  const externalId = usableExternalId(buyer.external_id ?? null);
  const holder = externalId ? await externalIdHolder(store.database, schema, tenant, externalId) : null;
  // A new id: the stream is started without reading it.
  const { state } = await store.transaction((tx) =>
    startStream(
      tx,
      store,
      customerAggregate,
      customerId,
      {
        type: 'CreateCustomer',
        data: {
          customerId,
          ...tenant,
          now,
          email: buyer.email.trim(),
          name: usableName(buyer.name),
          externalId,
          externalIdTakenBy: holder,
          testClock: buyer.testClock?.id ?? null,
        },
      },
      { ...tenant, occurredAt: now },
    ),
  );
  if (state.status === 'Empty') throw new Error(`customer ${customerId} not created`);
  return state.customer;
}

/** An external id that breaks the customer rules is not applied (the rest still provisions). */
export function usableExternalId(value: string | null): string | null {
  if (value === null) return null;
  return value.length <= CUSTOMER_LIMITS.externalId && EXTERNAL_ID_PATTERN.test(value) ? value : null;
}

/** Names are 1-255 characters: a blank one is no name, a longer one is cut. */
export function usableName(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed.slice(0, CUSTOMER_LIMITS.name) : null;
}

/**
 * `POST /internal/customers/resolve`, for checkout: who the buyer is when a session opens
 * (find only) and when they pay (`create`: a new buyer becomes a customer before any charge,
 * so that the charge, the order and the redemption all name one customer).
 */
export function mountResolveRoute(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  app.post('/internal/customers/resolve', validate({ body: ResolveCustomerBody }), async (req, res) => {
    const caller = callerOf(req);
    const tenant = { organization: caller.organization, environment: caller.environment };
    const { create, name, product_id, test_clock, ...names } = res.locals.input.body;
    const email = names.email;
    const testClock =
      create && test_clock ? await findTestClock(store.database, schema, tenant, test_clock) : undefined;
    const { customer, created } =
      create && email !== undefined
        ? await findOrCreateBuyer(store, tenant, { ...names, email, name, testClock }, now())
        : { customer: await findBuyer(store.database, schema, tenant, names), created: false };
    // A customer made just now has no subscriptions yet.
    const live =
      customer && product_id && !created
        ? (await liveSubscriptions(store.database, schema, customer.id, product_id))[0]
        : undefined;
    const answer: ResolvedCustomer = {
      customer: customer ? { id: customer.id, email: customer.email, external_id: customer.external_id } : null,
      live_subscription: live ? { id: live.id, status: live.status } : null,
    };
    res.json(answer);
  });
}
