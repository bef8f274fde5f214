import { ListOrdersQuery, OrderIdParams, livemodeOf, notFound, unknownCursor } from '@billing/contracts';
import { type PageFilter, type SqlExecutor, keysetPage } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, secretCallerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { sessionsTable } from '../sessions/read-model';
import type { Session } from '../sessions/session';
import { orderOf, paidSessionOf } from './resource';

/**
 * Every paid checkout's order, latest paid first; sessions paid in one instant by id. ISO times
 * in UTC sort as text. A range of `checkout_sessions_paid` (or, for one customer,
 * `checkout_sessions_paid_of_customer`), whatever the merchant's size.
 */
const PAID = () => `status = 'COMPLETE'`;
const PAID_ORDER = [
  { column: "document->>'completed_at'", type: 'text' },
  { column: 'id', type: 'text' },
] as const;

/** `GET /v1/orders` and `GET /v1/orders/:id` (Secret Key): paid orders, with their refunds (docs/orders.md). */
export function mountOrderRoutes(app: Express, context: ServiceContext): void {
  const sql = context.store.database;
  const { schema } = context.store.tables;

  app.get('/v1/orders', validate({ query: ListOrdersQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const query = res.locals.input.query as ListOrdersQuery;
    const after = query.starting_after ? await cursorOf(sql, schema, caller, query.starting_after) : null;
    const { rows, hasMore } = await keysetPage<{ document: Session }>(sql, {
      from: sessionsTable(schema),
      select: 'document',
      where: { organization: caller.organization, environment: caller.environment },
      filters: [PAID, ...filtersOf(query)],
      order: PAID_ORDER,
      after,
      limit: query.limit,
    });
    const data = rows.map((row) => orderOf(row.document, caller.environment));
    res.json({ object: 'list', data, has_more: hasMore, livemode: livemodeOf(caller.environment) });
  });

  app.get('/v1/orders/:id', validate({ params: OrderIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params as { id: string };
    const session = await paidSessionOf(sql, schema, caller, id);
    if (!session) throw notFound(`No such order: ${id}`);
    res.json(orderOf(session, caller.environment));
  });
}

function filtersOf(query: ListOrdersQuery): PageFilter[] {
  const filters: PageFilter[] = [];
  if (query.customer_id) filters.push((param) => `document->>'customer_id' = ${param(query.customer_id)}::text`);
  if (query.paid_from) {
    const from = new Date(query.paid_from).toISOString();
    filters.push((param) => `document->>'completed_at' >= ${param(from)}::text`);
  }
  if (query.paid_before) {
    const before = new Date(query.paid_before).toISOString();
    filters.push((param) => `document->>'completed_at' < ${param(before)}::text`);
  }
  return filters;
}

/** The page's order columns of the order `starting_after` names; 400 when it is not the tenant's. */
async function cursorOf(sql: SqlExecutor, schema: string, tenant: Tenant, orderId: string): Promise<unknown[]> {
  const session = await paidSessionOf(sql, schema, tenant, orderId);
  if (!session) throw unknownCursor(orderId, 'order');
  return [session.completed_at, session.id];
}
