import {
  EntitlementsQuery,
  type Customer,
  type Entitlements,
  type EntitlementStatus,
  type SubscriptionStatus,
  customerError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Express } from 'express';
import { findCustomer } from '../customers/queries';
import { validateCustomerRequest } from '../shared/customer-errors';
import { spendableCredits } from '../credits/queries';
import { liveSubscriptions } from '../subscriptions/queries';
import { timeOn } from '../test-clocks/read-model';
import { callerOf } from '@billing/service';

const ENTITLEMENT_STATUS: Partial<Record<SubscriptionStatus, EntitlementStatus>> = {
  ACTIVE: 'active',
  TRIAL: 'trialing',
  PAST_DUE: 'past_due',
};

/** The identifiers in the spec's precedence (as for portal sessions), with the lookup each one is. */
const IDENTIFIERS = [
  ['customer_id', 'id'],
  ['external_id', 'external_id'],
  ['email', 'email'],
] as const;

const NOTHING: Entitlements = { entitlements: [], customer: null, subscription: null, credits: null };

/**
 * `GET /v1/customers/entitlements` (beyond the spec): what a customer may use now, one entry
 * per live subscription, and the most recent live subscription. A paywall check: an identifier
 * that matches nobody (in the caller's organization and environment) answers the empty
 * entitlements, not 404. SDKs send every identifier they have; the first one that matches, in
 * the order customer_id, external_id, email, decides, and two that match different customers
 * are 400. A Publishable Key (a front end's paywall) may ask by customer_id or external_id only,
 * never by email, and learns only the products and their status. Mounted before `/v1/customers/:id`, which would otherwise take `entitlements` for an id.
 */
export function mountEntitlementRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;
  app.get('/v1/customers/entitlements', validateCustomerRequest({ query: EntitlementsQuery }), async (req, res) => {
    const caller = callerOf(req);
    const query: EntitlementsQuery = res.locals.input.query;
    // A page's key must not tell anyone whether an email belongs to a customer.
    if (caller.keyKind === 'publishable' && query.email !== undefined) {
      throw customerError('invalid_request', 'With a Publishable Key, ask by customer_id or external_id, not email', [
        { path: 'email', message: 'not accepted with a Publishable Key', code: 'unrecognized_keys' },
      ]);
    }
    const given = IDENTIFIERS.flatMap(([param, by]) => {
      const value = query[param];
      return value === undefined ? [] : [{ param, by, value }];
    });
    if (given.length === 0) {
      throw customerError('invalid_request', 'Give at least one of customer_id, external_id, email');
    }
    const found = await Promise.all(
      given.map(async ({ param, by, value }) => ({
        param,
        customer: await findCustomer(db, schema, caller, { by, value }),
      })),
    );
    const matched = found.filter((f): f is { param: (typeof f)['param']; customer: Customer } => !!f.customer);
    const [chosen] = matched;
    if (!chosen) {
      res.json(NOTHING);
      return;
    }
    const other = matched.find((m) => m.customer.id !== chosen.customer.id);
    if (other) {
      throw customerError('invalid_request', `${chosen.param} and ${other.param} name different customers`, [
        { path: other.param, message: `names a different customer than ${chosen.param}`, code: 'conflict' },
      ]);
    }
    const customerNow = await timeOn(db, schema, caller, chosen.customer.test_clock, now);
    const [live, balance] = await Promise.all([
      liveSubscriptions(db, schema, chosen.customer.id),
      spendableCredits(db, schema, caller, chosen.customer.id, customerNow),
    ]);
    const latest = live[0];
    const answer: Entitlements = {
      entitlements: live.map((s) => ({
        product: s.product.slug,
        product_id: s.product.id,
        status: ENTITLEMENT_STATUS[s.status]!,
        subscription_id: s.id,
        current_period_end: s.current_period_end,
      })),
      customer: {
        id: chosen.customer.id,
        external_id: chosen.customer.external_id,
        email: chosen.customer.email,
        name: chosen.customer.name,
      },
      subscription: latest
        ? {
            id: latest.id,
            status: latest.status,
            product: latest.product,
            current_period_end: latest.current_period_end,
          }
        : null,
      credits: { balance },
    };
    res.json(caller.keyKind === 'publishable' ? productsOnly(answer) : answer);
  });
}

/**
 * What a front end may learn: which products, in which status, the customer's ids (the SDKs
 * need a customer to allow anything) and credit balance; no email, name, subscription ids or dates.
 */
function productsOnly(answer: Entitlements): Entitlements {
  return {
    entitlements: answer.entitlements.map(({ product, product_id, status }) => ({ product, product_id, status })),
    customer: answer.customer && { id: answer.customer.id, external_id: answer.customer.external_id },
    subscription: null,
    credits: answer.credits,
  };
}
