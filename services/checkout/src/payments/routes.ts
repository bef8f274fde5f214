import { ChargeSavedCardBody, type SavedCardCharge, ApiError } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, requireCaller, validate } from '@billing/service';
import type { Express } from 'express';
import { dependenciesOf } from '../dependencies';

/**
 * `POST /internal/charges`, for billing's renewals: charges a card saved at checkout, off-session,
 * once per idempotency key. A decline is an answer (200 `declined`), not an error.
 */
export function mountChargeRoutes(app: Express, context: ServiceContext): void {
  app.post('/internal/charges', requireCaller, validate({ body: ChargeSavedCardBody }), async (req, res) => {
    const caller = callerOf(req);
    const { processor } = dependenciesOf(context);
    const refusal = processor.refusal(caller.environment);
    if (refusal) throw ApiError.of('payment_required', refusal);
    const body = res.locals.input.body;
    const result = await processor.chargeSavedCard({
      idempotencyKey: body.idempotency_key,
      environment: caller.environment,
      amount: body.amount,
      paymentMethodId: body.payment_method_id,
      now: context.now(),
    });
    const answer: SavedCardCharge =
      result.status === 'succeeded'
        ? { status: 'succeeded' }
        : result.status === 'declined'
          ? { status: 'declined', code: result.code, message: result.message }
          : { status: 'declined', code: 'authentication_required', message: 'The card asks for the buyer' };
    res.json(answer);
  });
}
