import {
  ByExternalIdQuery,
  CustomerExternalIdParams,
  CustomerIdParams,
  ListCustomersQuery,
  UpdateCustomerBody,
  Customer,
  type SavedPaymentMethod,
  SetDefaultPaymentMethodBody,
  customerError,
  inSchemaOrder,
  livemodeOf,
  notFound,
  validationError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import { setDefaultPaymentMethod } from '../engine/renewals/new-card';
import { validateCustomerRequest } from '../shared/customer-errors';
import { customerAggregate } from './aggregate';
import { externalIdHolder, listCustomers, requireCustomer, subscriptionSummaries } from './queries';
import { customersTable } from './read-model';
import { type Tenant, callerOf, secretCallerOf, validate } from '@billing/service';
import { balanceOf } from './balance';

const isUniqueViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === '23505';

export function mountCustomerRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

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
      const { state } = await customerAggregate.handle(
        store,
        customerId,
        { type: 'UpdateCustomer', data: { customerId, ...tenant, now: at, changes, externalIdTakenBy: taken } },
        { organization: tenant.organization, environment: tenant.environment, occurredAt: at },
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

/**
 * A sandbox reference carries the card's last4 and expiry (`pm_sandbox_<behaviour>_<last4>_<MMYYYY>_<random>`),
 * so a bare one is enough; any other bare reference is refused (send the card as checkout answered it).
 */
export function paymentMethodOf(value: SetDefaultPaymentMethodBody['payment_method']): SavedPaymentMethod {
  if (typeof value !== 'string') {
    const { id, brand, last4, exp_month, exp_year } = value;
    return { id, brand, last4, exp_month, exp_year };
  }
  const match = /^pm_sandbox_[a-z]+_([0-9]{4})_([0-9]{2})([0-9]{4})_[A-Za-z0-9]+$/.exec(value);
  if (!match) {
    const message = 'Send the payment method as POST /internal/payment_methods answered it';
    throw validationError([{ path: 'payment_method', code: 'invalid_value', message }], message);
  }
  return { id: value, brand: 'visa', last4: match[1]!, exp_month: Number(match[2]), exp_year: Number(match[3]) };
}

const InternalCustomerIdParams = z.object({ id: z.string().min(1).max(255) });

/** `PUT /internal/customers/{id}/default_payment_method` `{ payment_method }` (signed service calls). */
export function mountDefaultPaymentMethodRoute(app: Express, context: ServiceContext): void {
  app.put(
    '/internal/customers/:id/default_payment_method',
    validate({ params: InternalCustomerIdParams, body: SetDefaultPaymentMethodBody }),
    async (req, res) => {
      const caller = callerOf(req);
      const tenant = { organization: caller.organization, environment: caller.environment };
      const { id } = res.locals.input.params;
      const paymentMethod = paymentMethodOf(res.locals.input.body.payment_method);
      res.json(await setDefaultPaymentMethod(context, tenant, id, paymentMethod));
    },
  );
}
