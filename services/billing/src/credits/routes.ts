import {
  AdjustCreditsBody,
  type CreditAdjustment,
  type CreditBalance,
  CreditLedgerQuery,
  type CreditSpend,
  CreateCreditGrantBody,
  CreditsCustomerParams,
  SpendCreditsBody,
  livemodeOf,
  newId,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { IncomingMessage } from 'node:http';
import {
  type RouteLaneSpec,
  type Tenant,
  type ValidatedInput,
  requireCaller,
  secretCallerOf,
  validate,
} from '@billing/service';
import type { Express, Request } from 'express';
import { requireCustomer, timesOfCustomers } from '../customers/queries';
import { customerErrorOf } from '../shared/customer-errors';
import { timeOn } from '../test-clocks/read-model';
import { creditsAggregate } from './aggregate';
import type { CreditsCommand } from './decide';
import { CREDITS_MAX_ATTEMPTS, expireDue } from './expire';
import { ledgerSettingsOf } from './ledger-settings';
import { creditBalanceOf, grantOfEvent, ledgerPage, openGrants } from './queries';
import { spendCredits } from './spend';

const tenantOf = ({ organization, environment }: Tenant): Tenant => ({ organization, environment });

/**
 * A customer's credits (Secret Key; docs/credits.md). Another organization's or environment's
 * customer is a 404 as on `/v1/customers/{id}`; errors leave in the customer endpoints' codes.
 */
export function mountCreditRoutes(app: Express, context: ServiceContext): void {
  const { store } = context;
  const { schema } = store.tables;
  const db = store.database;

  /** The caller's customer `id` and the time on its clock (a Sandbox test clock, else the service's). */
  async function customerOf(req: Request, id: string) {
    const tenant: Tenant = secretCallerOf(req);
    const customer = await requireCustomer(db, schema, tenant, { by: 'id', value: id });
    const now = await timeOn(db, schema, tenant, customer.test_clock, context.now);
    return { tenant: tenantOf(tenant), now };
  }

  const run = (tenant: Tenant, customerId: string, now: Date, command: CreditsCommand) =>
    creditsAggregate.handle(store, customerId, command, {
      ...tenant,
      occurredAt: now,
      maxAttempts: CREDITS_MAX_ATTEMPTS,
    });

  app.get('/v1/customers/:id/credits', validate({ params: CreditsCustomerParams }), async (req, res) => {
    const { id } = res.locals.input.params;
    const { tenant, now } = await customerOf(req, id);
    await expireDue(context, tenant, id, now);
    const body: CreditBalance = {
      object: 'credit_balance',
      customer_id: id,
      balance: await creditBalanceOf(db, schema, tenant, id),
      grants: await openGrants(db, schema, tenant, id, now),
      livemode: livemodeOf(tenant.environment),
    };
    res.json(body);
  });

  app.get(
    '/v1/customers/:id/credits/ledger',
    validate({ params: CreditsCustomerParams, query: CreditLedgerQuery }),
    async (req, res) => {
      const { params, query } = res.locals.input;
      const { tenant, now } = await customerOf(req, params.id);
      await expireDue(context, tenant, params.id, now);
      const page = { limit: query.limit, startingAfter: query.starting_after };
      const { entries, hasMore } = await ledgerPage(db, schema, tenant, params.id, page);
      res.json({ object: 'list', data: entries, has_more: hasMore, livemode: livemodeOf(tenant.environment) });
    },
  );

  app.post(
    '/v1/customers/:id/credits/grants',
    validate({ params: CreditsCustomerParams, body: CreateCreditGrantBody }),
    async (req, res) => {
      const { params, body } = res.locals.input;
      const { tenant, now } = await customerOf(req, params.id);
      const grantId = newId('creditGrant');
      const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
      const { events } = await run(tenant, params.id, now, {
        type: 'GrantCredits',
        data: {
          customerId: params.id,
          now,
          grantId,
          amount: body.amount,
          source: 'manual',
          sourceId: null,
          reason: body.reason,
          priority: body.priority,
          expiresAt,
          idempotencyKey: null,
          ...(await ledgerSettingsOf(store, tenant)),
        },
      });
      const granted = events.map((e) => creditsAggregate.events.of(e)).find((e) => e?.type === 'CreditsGranted');
      if (granted?.type !== 'CreditsGranted') throw new Error(`grant ${grantId} was not recorded`);
      res.status(201).json(grantOfEvent(granted.data, tenant.environment));
    },
  );

  const answerSpend = spendAnswerOf(context);
  app.post(
    SPEND_PATH,
    validate(SPEND_SCHEMAS),
    async (req, res) => void res.json(await answerSpend(req, res.locals.input)),
  );

  app.post(
    '/v1/customers/:id/credits/adjustments',
    validate({ params: CreditsCustomerParams, body: AdjustCreditsBody }),
    async (req, res) => {
      const { params, body } = res.locals.input;
      const { tenant, now } = await customerOf(req, params.id);
      const adjustmentId = newId('creditAdjustment');
      const { state } = await run(tenant, params.id, now, {
        type: 'AdjustCredits',
        data: {
          customerId: params.id,
          now,
          adjustmentId,
          amount: body.amount,
          reason: body.reason,
          ...(await ledgerSettingsOf(store, tenant)),
        },
      });
      const answer: CreditAdjustment = {
        object: 'credit_adjustment',
        id: adjustmentId,
        customer_id: params.id,
        amount: body.amount,
        balance: state.balance,
        reason: body.reason,
        created_at: now.toISOString(),
        livemode: livemodeOf(tenant.environment),
      };
      res.status(201).json(answer);
    },
  );
}

const SPEND_PATH = '/v1/customers/:id/credits/spend';
const SPEND_SCHEMAS = { params: CreditsCustomerParams, body: SpendCreditsBody };

/**
 * The spend route on a lane past express (docs/decisions/0036): the same layers as its express
 * route (the internal signature, the body, the caller, `validate`) and the same answer and errors.
 */
export function creditSpendLane(context: ServiceContext): RouteLaneSpec<typeof SPEND_SCHEMAS> {
  return {
    method: 'POST',
    path: SPEND_PATH,
    schemas: SPEND_SCHEMAS,
    before: [requireCaller],
    answer: spendAnswerOf(context),
    translateError: (error, res) => customerErrorOf(error, res.locals.log),
  };
}

/** A spend as the API answers it, on the express route and on its lane. */
function spendAnswerOf(context: ServiceContext) {
  const spending = {
    store: context.store,
    customerTimes: (tenant: Tenant, ids: string[]) => timesOfCustomers(context, tenant, ids),
  };
  return async (req: IncomingMessage, input: ValidatedInput<typeof SPEND_SCHEMAS>): Promise<CreditSpend> => {
    const { params, body } = input;
    const tenant: Tenant = secretCallerOf(req as Request);
    const key = body.idempotency_key;
    const request = { amount: body.amount, idempotencyKey: key, metadata: body.metadata ?? null };
    // The customer, its clock and the settings are read with the other spends of its batch.
    const spend = await spendCredits(spending, { tenant: tenantOf(tenant), customerId: params.id, request });
    return {
      object: 'credit_spend',
      id: spend.spend_id,
      customer_id: params.id,
      amount: spend.amount,
      balance: spend.balance_after,
      idempotency_key: key,
      metadata: spend.metadata,
      created_at: spend.spent_at,
      livemode: livemodeOf(tenant.environment),
    };
  };
}
