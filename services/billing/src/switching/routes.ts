import {
  SwitchPreviewQuery,
  SwitchSubscriptionBody,
  SubscriptionIdParams,
  CustomerIdParams,
  livemodeOf,
  notFound,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { secretCallerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { customersTable } from '../customers/read-model';
import { balanceOf } from '../customers/balance';
import { cancelSchedule, getSchedule, performSwitch, previewSwitch } from './perform';

/** Switch preview, switch, the pending schedule (Secret Key), and the customer's balance. */
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
