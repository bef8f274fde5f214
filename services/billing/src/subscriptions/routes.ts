import {
  CancelSubscriptionBody,
  ListSubscriptionsQuery,
  Subscription,
  SubscriptionIdParams,
  inSchemaOrder,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import { handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, validate, secretCallerOf } from '@billing/service';
import type { Express, Response } from 'express';
import { type CancelSubscription, type ResumeSubscription, subscriptionAggregate } from './decide';
import { findSubscription, listSubscriptions } from './queries';
import { projectSubscriptions } from './read-model';
import { subscriptionStream } from './subscription';

export function mountSubscriptionRoutes(app: Express, { store, now }: ServiceContext): void {
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

  /** Runs the merchant's command on the subscription and answers it as it is after. */
  async function change(tenant: Tenant, id: string, command: CancelSubscription | ResumeSubscription, res: Response) {
    await handleCommand(store, subscriptionStream(id), subscriptionAggregate, command, {
      organization: tenant.organization,
      environment: tenant.environment,
      occurredAt: command.data.now,
      project: (tx, events) => projectSubscriptions(tx, schema, events),
    });
    const subscription = await findSubscription(db, schema, tenant, id);
    if (!subscription) throw notFound(`No such subscription: ${id}`);
    res.json(inSchemaOrder(Subscription, subscription));
  }

  app.post(
    '/v1/subscriptions/:id/cancel',
    validate({ params: SubscriptionIdParams, body: CancelSubscriptionBody.default({ at_period_end: true }) }),
    async (req, res) => {
      const caller = secretCallerOf(req);
      const { id } = res.locals.input.params;
      const who = {
        subscriptionId: id,
        organization: caller.organization,
        environment: caller.environment,
        now: now(),
      };
      const atPeriodEnd = res.locals.input.body.at_period_end;
      await change(caller, id, { type: 'CancelSubscription', data: { ...who, atPeriodEnd } }, res);
    },
  );

  app.post('/v1/subscriptions/:id/resume', validate({ params: SubscriptionIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params;
    const who = { subscriptionId: id, organization: caller.organization, environment: caller.environment, now: now() };
    await change(caller, id, { type: 'ResumeSubscription', data: who }, res);
  });
}
