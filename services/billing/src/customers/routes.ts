import {
  ByExternalIdQuery,
  CustomerExternalIdParams,
  CustomerIdParams,
  ListCustomersQuery,
  UpdateCustomerBody,
  Customer,
  customerError,
  inSchemaOrder,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import { type EventStoreTransaction, type RecordedEvent, handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Express, Request, Response } from 'express';
import { validateCustomerRequest } from '../shared/customer-errors';
import { customerStream } from './customer';
import { customerAggregate } from './decide';
import { externalIdHolder, listCustomers, requireCustomer, subscriptionSummaries } from './queries';
import { customersTable, projectCustomers } from './read-model';
import { type Tenant, secretCallerOf, validate } from '@billing/service';
import { balanceOf } from './balance';

const isUniqueViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === '23505';

export function mountCustomerRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;
  const project = (tx: EventStoreTransaction, events: RecordedEvent[]) => projectCustomers(tx, schema, events);

  app.get('/v1/customers', validateCustomerRequest({ query: ListCustomersQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { customers, hasMore } = await listCustomers(db, schema, caller, res.locals.input.query);
    res.json({
      object: 'list',
      data: customers,
      has_more: hasMore,
      next_cursor: hasMore ? (customers.at(-1)?.id ?? null) : null,
      livemode: livemodeOf(caller.environment),
    });
  });

  async function read(tenant: Tenant, by: 'id' | 'external_id', value: string, res: Response) {
    const customer = await requireCustomer(db, schema, tenant, { by, value });
    // Ordered here, for the response: the lookup also serves provisioning and other checks.
    res.json({
      ...inSchemaOrder(Customer, customer),
      subscriptions: await subscriptionSummaries(db, schema, customer.id),
    });
  }

  async function update(req: Request, tenant: Tenant, by: 'id' | 'external_id', value: string, res: Response) {
    const changes = res.locals.input.body as UpdateCustomerBody;
    const { id: customerId } = await requireCustomer(db, schema, tenant, { by, value });
    const taken =
      typeof changes.external_id === 'string' ? await externalIdHolder(db, schema, tenant, changes.external_id) : null;
    const at = now();
    try {
      const { state } = await handleCommand(
        store,
        customerStream(customerId),
        customerAggregate,
        { type: 'UpdateCustomer', data: { customerId, ...tenant, now: at, changes, externalIdTakenBy: taken } },
        { organization: tenant.organization, environment: tenant.environment, occurredAt: at, project },
      );
      if (state.status === 'Empty') throw customerError('resource_not_found', `No such customer: ${customerId}`);
      res.json(inSchemaOrder(Customer, state.customer));
    } catch (error) {
      // Another request linked the same external id between our check and our append.
      if (isUniqueViolation(error)) throw customerError('conflict', 'external_id is already used by another customer');
      throw error;
    }
  }

  /** Spec: `email` is bound to the customer; sending it is a wrong request, not a field to ignore. */
  const rejectEmail = (req: Request, _res: Response, next: (err?: unknown) => void) => {
    const body: unknown = req.body;
    if (typeof body === 'object' && body !== null && !Array.isArray(body) && 'email' in body) {
      next(customerError('invalid_request', 'email cannot be changed'));
      return;
    }
    next();
  };
  const body = UpdateCustomerBody.default({});

  app.get(
    '/v1/customers/external/:external_id',
    validateCustomerRequest({ params: CustomerExternalIdParams }),
    async (req, res) => {
      await read(secretCallerOf(req), 'external_id', res.locals.input.params.external_id, res);
    },
  );

  app.patch(
    '/v1/customers/external/:external_id',
    rejectEmail,
    validateCustomerRequest({ params: CustomerExternalIdParams, body }),
    async (req, res) => {
      await update(req, secretCallerOf(req), 'external_id', res.locals.input.params.external_id, res);
    },
  );

  app.get(
    '/v1/customers/:id',
    validateCustomerRequest({ params: CustomerIdParams, query: ByExternalIdQuery }),
    async (req, res) => {
      const { params, query } = res.locals.input;
      await read(secretCallerOf(req), query.by_external_id === 'true' ? 'external_id' : 'id', params.id, res);
    },
  );

  app.patch(
    '/v1/customers/:id',
    rejectEmail,
    validateCustomerRequest({ params: CustomerIdParams, query: ByExternalIdQuery, body }),
    async (req, res) => {
      const { params, query } = res.locals.input;
      await update(req, secretCallerOf(req), query.by_external_id === 'true' ? 'external_id' : 'id', params.id, res);
    },
  );
}

/** `GET /v1/customers/{id}/balance` (Secret Key): the customer's balance (docs/plan-switching.md, "Customer balance"). */
export function mountCustomerBalanceRoute(app: Express, context: ServiceContext): void {
  app.get('/v1/customers/:id/balance', validate({ params: CustomerIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params;
    const { store } = context;
    const { rows } = await store.database.query(
      `SELECT 1 FROM ${customersTable(store.tables.schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
      [id, caller.organization, caller.environment],
    );
    if (rows.length === 0) throw notFound(`No such customer: ${id}`);
    res.json({
      object: 'customer_balance',
      customer_id: id,
      balance: await balanceOf(store.database, store.tables.schema, caller, id),
      currency: 'TWD',
      livemode: livemodeOf(caller.environment),
    });
  });
}
