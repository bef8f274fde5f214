import {
  type CustomerOrder,
  CustomerOrdersQuery,
  type Environment,
  OrdersQuery,
  type OrganizationOrder,
  idText,
  unknownCursor,
} from '@billing/contracts';
import { type SqlExecutor, keysetPage } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { sessionsTable } from './read-model';
import type { Session } from './session';

const CustomerParams = z.object({ id: idText().min(1) });

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
 * payments list and export.
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

function toCustomerOrder(session: Session): CustomerOrder {
  const { order, product } = session;
  const refunded = order.amount_refunded ?? 0;
  const card = session.intent.payment_method;
  return {
    object: 'order',
    id: order.id,
    checkout_session_id: session.id,
    product: { id: product.id, name: product.name, type: product.type },
    amount: order.amount_total,
    amount_refunded: refunded,
    currency: 'TWD',
    status: refunded === 0 ? 'paid' : refunded < order.amount_total ? 'partially_refunded' : 'refunded',
    payment_method: card ? { brand: card.brand, last4: card.last4 } : null,
    paid_at: order.paid_at ?? session.completed_at!,
  };
}

function toOrganizationOrder(session: Session): OrganizationOrder {
  return { ...toCustomerOrder(session), customer_id: session.customer_id, customer_email: session.customer_email };
}
