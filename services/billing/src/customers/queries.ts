import {
  type Customer,
  CustomerListItem,
  type CustomerStatus,
  type CustomerSubscriptionSummary,
  type Subscription,
  customerError,
  inSchemaOrder,
  unknownCursor,
} from '@billing/contracts';
import { type SqlExecutor, createdBetween, cursorAfter, keysetPage, newestFirst } from '@billing/eventstore';
import { subscriptionsTable } from '../subscriptions/read-model';
import { customersTable, emailKey } from './read-model';
import { testClocksTable } from '../test-clocks/read-model';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';

type Param = (value: unknown) => string;

type Lookup = { by: 'id' | 'external_id' | 'email'; value: string };

const COLUMN = { id: 'id', external_id: 'external_id', email: 'email_key' } as const;

export async function findCustomer(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  lookup: Lookup,
): Promise<Customer | undefined> {
  const value = lookup.by === 'email' ? emailKey(lookup.value) : lookup.value;
  const { rows } = await sql.query<{ document: Customer }>(
    `SELECT document FROM ${customersTable(schema)}
     WHERE ${COLUMN[lookup.by]} = $1 AND organization = $2 AND environment = $3`,
    [value, tenant.organization, tenant.environment],
  );
  return rows[0]?.document;
}

/** The id of the customer holding `externalId` in the tenant, or null. */
export async function externalIdHolder(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  externalId: string,
): Promise<string | null> {
  return (await findCustomer(sql, schema, tenant, { by: 'external_id', value: externalId }))?.id ?? null;
}

export async function requireCustomer(sql: SqlExecutor, schema: string, tenant: Tenant, lookup: Lookup) {
  const customer = await findCustomer(sql, schema, tenant, lookup);
  if (!customer) {
    const what = lookup.by === 'id' ? '' : ` with ${lookup.by}`;
    throw customerError('resource_not_found', `No such customer${what}: ${lookup.value}`);
  }
  return customer;
}

/** Newest first (`created_at` desc, then `id` desc), cursor-paged by the last id seen. */
export async function listCustomers(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  page: {
    limit: number;
    starting_after?: string;
    email?: string;
    status?: CustomerStatus;
    /** The dashboard's search: an exact external id, and a part of the email, name, external id or id. */
    external_id?: string;
    query?: string;
    /** The dashboard's range: created at or after `from`, before `to` (ISO instants). */
    from?: string;
    to?: string;
  },
): Promise<{ customers: CustomerListItem[]; hasMore: boolean }> {
  const after = await cursorAfter(
    page.starting_after,
    (id) => findCustomer(sql, schema, tenant, { by: 'id', value: id }),
    (id) => unknownCursor(id, 'customer'), // 400 invalid_request on the customer routes
  );
  const search = page.query?.toLowerCase();
  const { rows, hasMore } = await keysetPage<{ document: Customer; orders_count: number; subscriptions_count: string }>(
    sql,
    {
      from: `${customersTable(schema)} c`,
      select: `c.document, c.orders_count,
        (SELECT count(*) FROM ${subscriptionsTable(schema)} s WHERE s.customer_id = c.id) AS subscriptions_count`,
      where: {
        'c.organization': tenant.organization,
        'c.environment': tenant.environment,
        'c.email_key': page.email === undefined ? undefined : emailKey(page.email),
        'c.status': page.status,
        'c.external_id': page.external_id,
      },
      filters: [
        ...(search === undefined ? [] : [(param: Param) => matchesSearch(param(search))]),
        ...createdBetween('c', page),
      ],
      order: newestFirst('c'),
      after,
      limit: page.limit,
    },
  );
  return {
    customers: rows.map((r) =>
      inSchemaOrder(CustomerListItem, {
        ...r.document,
        subscriptions_count: Number(r.subscriptions_count),
        orders_count: r.orders_count,
      }),
    ),
    hasMore,
  };
}

/** The dashboard's search (lower case, at `placeholder`) is part of the email, name, external id or id. */
const matchesSearch = (placeholder: string) => {
  const search = `${placeholder}::text`;
  return `strpos(c.email_key, ${search}) > 0 OR strpos(lower(c.document->>'name'), ${search}) > 0
   OR strpos(lower(c.external_id), ${search}) > 0 OR strpos(lower(c.id), ${search}) > 0`;
};

/** The customer's subscriptions, newest first, as single-customer reads show them. */
export async function subscriptionSummaries(
  sql: SqlExecutor,
  schema: string,
  customerId: string,
): Promise<CustomerSubscriptionSummary[]> {
  const { rows } = await sql.query<{ document: Subscription }>(
    `SELECT document FROM ${subscriptionsTable(schema)} WHERE customer_id = $1 ORDER BY created_at DESC, id DESC`,
    [customerId],
  );
  return rows.map(({ document: s }) => ({
    id: s.id,
    status: s.status,
    current_period_start: s.current_period_start,
    current_period_end: s.current_period_end,
    product: s.product,
  }));
}

/** The time of each of the tenant's customers among `ids` (its test clock's, or now); the others are absent. */
export async function timesOfCustomers(
  context: Pick<ServiceContext, 'store' | 'now'>,
  tenant: Tenant,
  ids: string[],
): Promise<Map<string, Date>> {
  const { database, tables } = context.store;
  const { rows } = await database.query<{ id: string; clock_time: Date | null }>(
    `SELECT c.id, (k.document->>'frozen_time')::timestamptz AS clock_time
     FROM ${customersTable(tables.schema)} c
     LEFT JOIN ${testClocksTable(tables.schema)} k
       ON k.id = c.document->>'test_clock' AND k.organization = c.organization AND k.environment = c.environment
     WHERE c.id = ANY($1::text[]) AND c.organization = $2 AND c.environment = $3`,
    [ids, tenant.organization, tenant.environment],
  );
  const now = context.now();
  return new Map(rows.map((row) => [row.id, row.clock_time ? new Date(row.clock_time) : now]));
}
