import {
  type AwaitingOrder,
  AwaitingOrdersQuery,
  type CustomerOrder,
  CustomerOrdersQuery,
  type Environment,
  OrderQuery,
  OrdersQuery,
  type OrganizationOrder,
  idText,
  notFound,
  unknownCursor,
} from '@billing/contracts';
import { type SqlExecutor, keysetPage } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { sessionsTable } from '../sessions/read-model';
import type { Session } from '../sessions/session';
import { orderOf, paidSessionOf } from './resource';

const CustomerParams = z.object({ id: idText().min(1) });
const OrderParams = z.object({ id: idText().min(1) });

/**
 * Newest paid first; sessions paid in one instant by id. ISO times in UTC sort as text. A range
 * of the index `checkout_sessions_paid_by_customer` (read-model.ts), whatever the merchant's size.
 */
const PAID_ORDER = [
  { column: "document->>'completed_at'", type: 'text' },
  { column: 'id', type: 'text' },
] as const;

/** Paid one-time purchases only: the literals of the partial indexes, so that the planner takes them. */
const PAID_ONE_TIME = () => `status = 'COMPLETE' AND document->>'mode' = 'PAYMENT'`;

/**
 * `GET /admin/customers/:id/orders?environment=` (the admin API's
 * `/admin/v1/organizations/{org}/customers/{id}/orders`): what billing's invoice payments do not
 * hold, the customer's one-time purchases paid at checkout, for the dashboard's customer page;
 * `GET /admin/orders?environment=&from=&to=`: the organization's, paid in a time range, for its
 * payments list and export; `GET /admin/orders/awaiting_payment?environment=`: those whose buyer
 * is still to pay at an ATM or a store; `GET /admin/orders/:id?environment=`: one paid order, for
 * the dashboard's search (a subscription's first payment too).
 */
export function mountOrderReads(app: Express, context: ServiceContext): void {
  const sql = context.store.database;
  const { schema } = context.store.tables;
  app.get(
    '/admin/customers/:id/orders',
    validate({ params: CustomerParams, query: CustomerOrdersQuery }),
    async (req, res) => {
      const query = res.locals.input.query as CustomerOrdersQuery;
      const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
      const { id } = res.locals.input.params as z.infer<typeof CustomerParams>;
      const after = query.starting_after ? await orderCursor(sql, schema, tenant, id, query.starting_after) : null;
      const { rows, hasMore } = await keysetPage<{ document: Session }>(sql, {
        from: sessionsTable(schema),
        select: 'document',
        where: { organization: tenant.organization, environment: tenant.environment },
        filters: [PAID_ONE_TIME, (param) => `document->>'customer_id' = ${param(id)}::text`],
        order: PAID_ORDER,
        after,
        limit: query.limit,
      });
      res.json({ object: 'list', data: rows.map((row) => toCustomerOrder(row.document)), has_more: hasMore });
    },
  );

  app.get('/admin/orders/awaiting_payment', validate({ query: AwaitingOrdersQuery }), async (req, res) => {
    const query = res.locals.input.query as AwaitingOrdersQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const after = query.starting_after ? await awaitingCursor(sql, schema, tenant, query.starting_after) : null;
    const { rows, hasMore } = await keysetPage<{ document: Session }>(sql, {
      from: sessionsTable(schema),
      select: 'document',
      where: { organization: tenant.organization, environment: tenant.environment },
      filters: [AWAITING_TRANSFER],
      order: AWAITING_ORDER,
      after,
      limit: query.limit,
    });
    res.json({ object: 'list', data: rows.map((row) => toAwaitingOrder(row.document)), has_more: hasMore });
  });

  app.get('/admin/orders/:id', validate({ params: OrderParams, query: OrderQuery }), async (req, res) => {
    const { environment } = res.locals.input.query as { environment: Environment };
    const { id } = res.locals.input.params as z.infer<typeof OrderParams>;
    const session = await paidSessionOf(sql, schema, { organization: adminOrganizationOf(req), environment }, id);
    if (!session) throw notFound(`No such order: ${id}`);
    res.json(toOrganizationOrder(session));
  });

  app.get('/admin/orders', validate({ query: OrdersQuery }), async (req, res) => {
    const query = res.locals.input.query as OrdersQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const after = query.starting_after ? await orderCursor(sql, schema, tenant, null, query.starting_after) : null;
    const { rows, hasMore } = await keysetPage<{ document: Session }>(sql, {
      from: sessionsTable(schema),
      select: 'document',
      where: { organization: tenant.organization, environment: tenant.environment },
      filters: [
        PAID_ONE_TIME,
        (param) => `document->>'completed_at' >= ${param(new Date(query.from).toISOString())}::text`,
        (param) => `document->>'completed_at' < ${param(new Date(query.to).toISOString())}::text`,
      ],
      order: PAID_ORDER,
      after,
      limit: query.limit,
    });
    res.json({ object: 'list', data: rows.map((row) => toOrganizationOrder(row.document)), has_more: hasMore });
  });
}

/**
 * Open sessions whose buyer was given an ATM account or a store code: the literals of the
 * partial index `checkout_sessions_awaiting_transfer`, whose order this is (latest issued first).
 */
const AWAITING_TRANSFER = () => `status = 'OPEN' AND jsonb_typeof(document->'async_payment') = 'object'`;
const AWAITING_ORDER = [
  { column: "document->'async_payment'->>'issued_at'", type: 'text' },
  { column: 'id', type: 'text' },
] as const;

async function awaitingCursor(sql: SqlExecutor, schema: string, tenant: Tenant, orderId: string): Promise<unknown[]> {
  const { rows } = await sql.query<{ issued_at: string; id: string }>(
    `SELECT document->'async_payment'->>'issued_at' AS issued_at, id FROM ${sessionsTable(schema)}
     WHERE document->'order'->>'id' = $1 AND organization = $2 AND environment = $3 AND ${AWAITING_TRANSFER()}`,
    [orderId, tenant.organization, tenant.environment],
  );
  if (!rows[0]) throw unknownCursor(orderId, 'order');
  return [rows[0].issued_at, rows[0].id];
}

/** The order `starting_after` names, as the page's order columns; 400 when it is not the customer's (or the tenant's). */
async function orderCursor(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant & { environment: Environment },
  customerId: string | null,
  orderId: string,
): Promise<unknown[]> {
  const { rows } = await sql.query<{ completed_at: string; id: string }>(
    `SELECT document->>'completed_at' AS completed_at, id FROM ${sessionsTable(schema)}
     WHERE document->'order'->>'id' = $1 AND organization = $2 AND environment = $3
       AND ($4::text IS NULL OR document->>'customer_id' = $4) AND status = 'COMPLETE'`,
    [orderId, tenant.organization, tenant.environment, customerId],
  );
  if (!rows[0]) throw unknownCursor(orderId, 'order');
  return [rows[0].completed_at, rows[0].id];
}

/** The public order (`orderOf`) in the dashboard's fewer words: what was paid, by which processor. */
function toCustomerOrder(session: Session): CustomerOrder {
  const o = orderOf(session, session.environment);
  return {
    object: 'order',
    id: o.id,
    checkout_session_id: o.checkout_session_id,
    product: o.product,
    amount: o.amount_total,
    amount_refunded: o.amount_refunded,
    currency: 'TWD',
    status: o.status,
    payment_method: o.payment_method,
    processor: o.processor,
    processor_reference: o.processor_reference,
    refunds: o.refunds,
    paid_at: o.paid_at,
  };
}

function toAwaitingOrder(session: Session): AwaitingOrder {
  const waiting = session.async_payment!;
  return {
    object: 'order',
    id: session.order.id,
    checkout_session_id: session.id,
    product: { id: session.product.id, name: session.product.name, type: session.product.type },
    amount: waiting.instructions.amount,
    currency: 'TWD',
    status: 'awaiting_payment',
    customer_id: session.customer_id,
    customer_email: session.customer_email,
    processor: waiting.processor,
    processor_reference: waiting.trade_no,
    payment_instructions: waiting.instructions,
    issued_at: waiting.issued_at,
  };
}

function toOrganizationOrder(session: Session): OrganizationOrder {
  return { ...toCustomerOrder(session), customer_id: session.customer_id, customer_email: session.customer_email };
}
