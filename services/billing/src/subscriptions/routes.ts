import {
  ListSubscriptionsQuery,
  LiveSubscriptionQuery,
  type LiveSubscriptionAnswer,
  Subscription,
  SubscriptionIdParams,
  inSchemaOrder,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, validate, secretCallerOf } from '@billing/service';
import type { Express } from 'express';
import { findCustomer } from '../customers/queries';
import { findSubscription, listSubscriptions, liveSubscriptions } from './queries';

export function mountSubscriptionRoutes(app: Express, { store }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

  app.get('/v1/subscriptions', validate({ query: ListSubscriptionsQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { subscriptions, hasMore } = await listSubscriptions(db, schema, caller, res.locals.input.query);
    // Clients read `subscriptions` (spec); `data` keeps the list envelope of every other list.
    res.json({
      object: 'list',
      data: subscriptions,
      subscriptions,
      has_more: hasMore,
      livemode: livemodeOf(caller.environment),
    });
  });

  app.get('/v1/subscriptions/:id', validate({ params: SubscriptionIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params;
    const subscription = await findSubscription(db, schema, caller, id);
    if (!subscription) throw notFound(`No such subscription: ${id}`);
    res.json(inSchemaOrder(Subscription, subscription));
  });

  /**
   * Checkout's duplicate-subscription check before it opens a session: the live subscription
   * (ACTIVE, TRIAL, PAST_DUE) of the customer with this email to this product, or null.
   */
  app.get('/internal/subscriptions/live', validate({ query: LiveSubscriptionQuery }), async (req, res) => {
    const caller = callerOf(req);
    const { email, product_id } = res.locals.input.query;
    const customer = await findCustomer(db, schema, caller, { by: 'email', value: email });
    const live = customer ? (await liveSubscriptions(db, schema, customer.id, product_id))[0] : undefined;
    const answer: LiveSubscriptionAnswer = { subscription: live ? { id: live.id, status: live.status } : null };
    res.json(answer);
  });
}
