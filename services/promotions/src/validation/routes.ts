import {
  AssignRedemptionBody,
  type Environment,
  ReserveRedemptionBody,
  emailKey,
  idText,
  livemodeOf,
  type ReservedRedemption,
  ValidatePromotionCodeBody,
  badRequest,
  newId,
  notFound,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, validate } from '@billing/service';
import type { Express, Request } from 'express';
import { z } from 'zod';
import { promotionCodeAggregate } from '../promotion-codes/aggregate';
import type { PromotionCodeCommand } from '../promotion-codes/decide';
import { holdsCap } from '../promotion-codes/promotion-code';
import { findRedemption } from '../promotion-codes/queries';
import { discountFor } from './discount';
import { promoCodeError } from './errors';
import { loadValidationInput } from './load';
import { validatePromotionCode } from './validate';

/**
 * Enough attempts for every contender of a burst to be decided on a fresh state: each failed
 * attempt means another reservation succeeded, and at most `max_redemptions` can.
 */
const RESERVE_MAX_ATTEMPTS = 200;

export function mountValidationRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

  // `valid: false` answers 200: the validation itself succeeded (Stripe-like).
  app.post('/v1/promotion-codes/validate', validate({ body: ValidatePromotionCodeBody }), async (req, res) => {
    const caller = callerOf(req);
    const body = res.locals.input.body;
    if (caller.keyKind === 'publishable' && !body.customer_id && !body.external_id) {
      throw badRequest('external_id or customer_id is required with a Publishable Key');
    }
    const { input } = await loadValidationInput(db, schema, caller, body, now());
    res.json({ ...validatePromotionCode(input), livemode: livemodeOf(caller.environment) });
  });

  /**
   * Internal API for checkout: validates with Secret-Key semantics and reserves a redemption.
   * The caps (global and per customer) are left to the decider, which checks them on the
   * stream, so that concurrent reservations cannot overshoot them.
   */
  app.post('/internal/promotion-codes/reserve', validate({ body: ReserveRedemptionBody }), async (req, res) => {
    const caller = { ...callerOf(req), keyKind: 'secret' as const };
    const body = res.locals.input.body;
    const at = now();
    const { input, promotionCode } = await loadValidationInput(db, schema, caller, body, at);
    const uncapped = {
      ...input,
      promotionCode: input.promotionCode && { ...input.promotionCode, held_redemptions: 0 },
      customer: { ...input.customer, redemptions: 0 },
    };
    const result = validatePromotionCode(uncapped);
    if (!result.valid || !promotionCode || !input.coupon)
      throw promoCodeError(result.error_code ?? 'PROMO_CODE_NOT_FOUND');
    const discount = discountFor(input.coupon, body.amount);
    const { state, events } = await promotionCodeAggregate.handle(
      store,
      promotionCode.id,
      {
        type: 'ReserveRedemption',
        data: {
          promotionCodeId: promotionCode.id,
          organization: caller.organization,
          environment: caller.environment,
          now: at,
          redemptionId: newId('redemption'),
          checkoutSessionId: body.checkout_session_id,
          customerId: input.request.customerId,
          externalId: input.request.externalId,
          email: input.request.email,
          discountAmount: discount.amount!,
        },
      },
      {
        organization: caller.organization,
        environment: caller.environment,
        occurredAt: at,
        maxAttempts: RESERVE_MAX_ATTEMPTS,
      },
    );
    const held =
      state.status === 'Existing'
        ? Object.values(state.redemptions).find(
            (r) => r.checkout_session_id === body.checkout_session_id && holdsCap(r),
          )
        : undefined;
    if (!held) throw new Error('reservation not found after reserving');
    const reply: ReservedRedemption = {
      redemption_id: held.id,
      promotion_code_id: promotionCode.id,
      status: held.status as 'RESERVED' | 'ACTIVE',
      discount: discountFor(input.coupon, body.amount),
      amount_after_discount: body.amount - held.discount_amount,
      coupon: {
        coupon_id: promotionCode.coupon_id,
        discount_type: input.coupon.discount_type,
        discount_amount: input.coupon.discount_amount,
        duration: input.coupon.duration,
        duration_in_months: input.coupon.duration_in_months,
        bonus_months: input.coupon.bonus_months,
      },
      coupon_name: input.coupon.name,
    };
    // A repeated reservation for the same session answers 200 with the one it holds.
    res.status(events.length > 0 ? 201 : 200).json(reply);
  });

  const redemptionParams = z.object({ id: idText() });
  /** Runs a command on the stream of the caller's redemption `id`; 404 when there is none. */
  async function onRedemption(
    req: Request,
    command: (target: {
      promotionCodeId: string;
      organization: string;
      environment: Environment;
      now: Date;
    }) => PromotionCodeCommand,
  ) {
    const caller = callerOf(req);
    const id = String(req.params.id);
    const row = await findRedemption(db, schema, caller, id);
    if (!row) throw notFound(`No such redemption: ${id}`);
    const at = now();
    const target = {
      promotionCodeId: row.promotion_code_id,
      organization: caller.organization,
      environment: caller.environment,
      now: at,
    };
    const { state } = await promotionCodeAggregate.handle(store, row.promotion_code_id, command(target), {
      organization: caller.organization,
      environment: caller.environment,
      occurredAt: at,
    });
    const status = state.status === 'Existing' ? state.redemptions[id]?.status : undefined;
    return { redemption_id: id, promotion_code_id: row.promotion_code_id, status };
  }

  app.post('/internal/redemptions/:id/release', validate({ params: redemptionParams }), async (req, res) => {
    const redemptionId = String(req.params.id);
    res.json(await onRedemption(req, (target) => ({ type: 'ReleaseRedemption', data: { ...target, redemptionId } })));
  });

  /** Checkout names the buyer before charging; the per-customer limit is checked again (409). */
  app.post(
    '/internal/redemptions/:id/assign',
    validate({ params: redemptionParams, body: AssignRedemptionBody }),
    async (req, res) => {
      const redemptionId = String(req.params.id);
      const body = res.locals.input.body;
      res.json(
        await onRedemption(req, (target) => ({
          type: 'AssignRedemption',
          data: {
            ...target,
            redemptionId,
            customerId: body.customer_id,
            externalId: body.external_id ?? null,
            email: body.email === undefined ? null : emailKey(body.email),
          },
        })),
      );
    },
  );
}
