import {
  EntitlementsQuery,
  type Entitlements,
  type EntitlementStatus,
  type SubscriptionStatus,
  customerError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Express } from 'express';
import { requireCustomer } from '../customers/queries';
import { validateCustomerRequest } from '../shared/customer-errors';
import { liveSubscriptions } from '../subscriptions/queries';
import { secretCallerOf } from '@billing/service';

const ENTITLEMENT_STATUS: Partial<Record<SubscriptionStatus, EntitlementStatus>> = {
  ACTIVE: 'active',
  TRIAL: 'trialing',
  PAST_DUE: 'past_due',
};

/**
 * `GET /v1/customers/entitlements` (beyond the spec): what a customer may use now, one entry
 * per live subscription, and the most recent live subscription. Mounted before
 * `/v1/customers/:id`, which would otherwise take `entitlements` for an id.
 */
export function mountEntitlementRoutes(app: Express, { store }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;
  app.get('/v1/customers/entitlements', validateCustomerRequest({ query: EntitlementsQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { email, external_id, customer_id } = res.locals.input.query;
    const given = [
      ['email', email],
      ['external_id', external_id],
      ['id', customer_id],
    ].filter((entry): entry is ['email' | 'external_id' | 'id', string] => entry[1] !== undefined);
    if (given.length !== 1) {
      throw customerError('invalid_request', 'Give exactly one of email, external_id, customer_id');
    }
    const [by, value] = given[0]!;
    const customer = await requireCustomer(db, schema, caller, { by, value });
    const live = await liveSubscriptions(db, schema, customer.id);
    const latest = live[0];
    const answer: Entitlements = {
      entitlements: live.map((s) => ({
        product: s.product.slug,
        product_id: s.product.id,
        status: ENTITLEMENT_STATUS[s.status]!,
        subscription_id: s.id,
        current_period_end: s.current_period_end,
      })),
      subscription: latest
        ? {
            id: latest.id,
            status: latest.status,
            product: latest.product,
            current_period_end: latest.current_period_end,
          }
        : null,
    };
    res.json(answer);
  });
}
