import { CreateSubscriptionBody, SubscriptionIdParams } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { secretCallerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { completeSubscription, createSubscription } from './create';

/** `POST /v1/subscriptions` and `POST /v1/subscriptions/{id}/complete` (Secret Key; Idempotency-Key at the gateway). */
export function mountDirectCreationRoutes(app: Express, context: ServiceContext): void {
  app.post('/v1/subscriptions', validate({ body: CreateSubscriptionBody }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { status, body } = await createSubscription(
      context,
      caller.organization,
      caller.environment,
      res.locals.input.body,
    );
    res.status(status).json(body);
  });

  app.post('/v1/subscriptions/:id/complete', validate({ params: SubscriptionIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    res.json(await completeSubscription(context, caller.organization, caller.environment, res.locals.input.params.id));
  });
}
