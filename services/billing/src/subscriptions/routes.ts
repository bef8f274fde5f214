import {
  CancelSubscriptionBody,
  ListSubscriptionsQuery,
  Subscription,
  SubscriptionIdParams,
  SwitchPreviewQuery,
  SwitchSubscriptionBody,
  inSchemaOrder,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { validate, secretCallerOf } from '@billing/service';
import type { Express } from 'express';
import { performSwitch, previewSwitch } from '../engine/switching/perform';
import { cancelNowWithFinalInvoice } from '../engine/renewals/final-invoice';
import { cancelSchedule, getSchedule } from '../engine/switching/schedules';
import { cancelSubscription, resumeSubscription } from './commands';
import { currentSubscription, findSubscription, listSubscriptions } from './queries';

export function mountSubscriptionRoutes(app: Express, context: ServiceContext): void {
  const { store } = context;
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

  app.post(
    '/v1/subscriptions/:id/cancel',
    validate({
      params: SubscriptionIdParams,
      body: CancelSubscriptionBody.default({ at_period_end: true, invoice_now: false }),
    }),
    async (req, res) => {
      const caller = secretCallerOf(req);
      const { id } = res.locals.input.params;
      const { at_period_end: atPeriodEnd, invoice_now: invoiceNow } = res.locals.input.body as CancelSubscriptionBody;
      if (!invoiceNow) return res.json(await cancelSubscription(context, caller, id, atPeriodEnd));
      await cancelNowWithFinalInvoice(context, caller, id);
      res.json(await currentSubscription(context, caller, id));
    },
  );

  app.post('/v1/subscriptions/:id/resume', validate({ params: SubscriptionIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    res.json(await resumeSubscription(context, caller, res.locals.input.params.id));
  });
}

/** Switch preview, switch and the pending schedule (Secret Key): the switching workflow's API (docs/plan-switching.md). */
export function mountSwitchingRoutes(app: Express, context: ServiceContext): void {
  app.get(
    '/v1/subscriptions/:id/switch-preview',
    validate({ params: SubscriptionIdParams, query: SwitchPreviewQuery }),
    async (req, res) => {
      const caller = secretCallerOf(req);
      const { id } = res.locals.input.params;
      const { target_product_id, proration_behavior } = res.locals.input.query;
      res.json(
        await previewSwitch(context, caller.organization, caller.environment, id, target_product_id, {
          prorationBehavior: proration_behavior,
        }),
      );
    },
  );

  app.post(
    '/v1/subscriptions/:id/switch',
    validate({ params: SubscriptionIdParams, body: SwitchSubscriptionBody }),
    async (req, res) => {
      const caller = secretCallerOf(req);
      const { id } = res.locals.input.params;
      const { target_product_id, proration_behavior } = res.locals.input.body;
      res.json(
        await performSwitch(context, caller.organization, caller.environment, id, {
          targetProductId: target_product_id,
          prorationBehavior: proration_behavior,
        }),
      );
    },
  );

  app.get('/v1/subscriptions/:id/schedule', validate({ params: SubscriptionIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    res.json(await getSchedule(context, caller.organization, caller.environment, res.locals.input.params.id));
  });

  app.delete('/v1/subscriptions/:id/schedule', validate({ params: SubscriptionIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    res.json(await cancelSchedule(context, caller.organization, caller.environment, res.locals.input.params.id));
  });
}
