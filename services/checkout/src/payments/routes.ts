import {
  type ChargeStatus,
  ChargeStatusBody,
  ChargeSavedCardBody,
  ChargeSavedCardsBody,
  CreatePaymentMethodBody,
  type CreatedPaymentMethod,
  PortalCardChargeBody,
  PortalCardResultBody,
  PortalCardVerifyBody,
  PortalCardFieldsBody,
  type PortalCardFields,
  type SavedCardCharge,
  type SavedCardCharges,
  ApiError,
  type Environment,
  conflict,
  randomBase62,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, formBodies, requireCaller, validate } from '@billing/service';
import type { Express } from 'express';
import { dependenciesOf } from '../dependencies';
import { chargePayuniSavedCard, isPayuniCard, payuniChargeStatus } from './payuni-saved-cards';
import type { PaymentProcessor, SavedCardChargeRequest } from './processor';
import { chargeEcpayPlan, ecpayPlanChargeStatus, isEcpayPlan } from './ecpay-plans';
import {
  type InvoiceChargeResult,
  acceptPayuniInvoiceNotification,
  chargeByPayuniCode,
  isPayuniCodeMethod,
  payuniCodeChargeStatus,
} from './payuni-invoice-codes';
import { type ProcessorMerchant, processorMerchantOf } from './settings/merchant-of';
import { refuseUnlessChargeable } from './settings/refusal';
import { CardChargeUnanswered } from './payuni/embed';
import {
  acceptPortalCardResult,
  chargePortalCard,
  openPortalCardFields,
  portalCardResult,
  verifyPortalCard,
} from './payuni-portal-cards';
import { payuniFieldsScriptUrl } from './payuni/fields-script';
import { chargeTradeOf, isAtProcessor } from './charge-trade';
import { chargeByEcpayCode, ecpayCodeChargeStatus, isEcpayCodeMethod } from './ecpay-invoice-codes';
import { noteRenewalAnswer, noteRenewalCharge, recheckIfPaid } from './renewal-charges';

/**
 * `POST /internal/charges`, for billing's renewals: charges a card saved at checkout, off-session,
 * once per idempotency key. A decline is an answer (200 `declined`), not an error.
 * `POST /internal/charges/batch` takes up to 100 of them in one call.
 */
export function mountChargeRoutes(app: Express, context: ServiceContext): void {
  // PAYUNi's posts about a renewal's ATM account or store code (NotifyURL): checked and
  // acknowledged; billing learns the payment by asking the charge's key.
  app.post('/checkout/:trade_no/payuni/invoice-notify', formBodies('16kb'), async (req, res) => {
    const checked = await acceptPayuniInvoiceNotification(context, String(req.params.trade_no), req.body ?? {});
    // A transfer billing was told had not come by its deadline: asked about at once.
    await recheckIfPaid(context, checked);
    res
      .status(checked ? 200 : 400)
      .type('text')
      .send(checked ? 'OK' : 'Not a post of this merchant about this code');
  });

  app.post('/internal/charges', requireCaller, validate({ body: ChargeSavedCardBody }), async (req, res) => {
    const caller = callerOf(req);
    const request = savedCardRequest(context, caller.environment, res.locals.input.body);
    res.json(answerOf(await chargeSavedCard(context, caller, request), request.idempotencyKey));
  });

  /**
   * `POST /internal/charges/status`: the status query by the platform's key, for billing's
   * reconciler (docs/lost-answers.md). With `release_if_absent`, a key never answered is given
   * up at the processor, so the answer is final either way. A key the simulator never saw is
   * asked of PAYUNi, or of the ECPay plan it was asked of, when the organization pays through it.
   */
  app.post('/internal/charges/status', requireCaller, validate({ body: ChargeStatusBody }), async (req, res) => {
    const caller = callerOf(req);
    const { processor } = dependenciesOf(context);
    const { idempotency_key: key, release_if_absent: release } = res.locals.input.body as Required<ChargeStatusBody>;
    let kept: InvoiceChargeResult | null = await processor.lookup(key);
    if (!kept) {
      kept = await unsimulatedStatus(context, caller, key, release);
      if (kept) await noteRenewalAnswer(context.store, key, kept, context.now());
    }
    const answer: ChargeStatus = kept ? answerOf(kept, key) : { status: 'not_found' };
    res.json(answer);
  });

  /**
   * `POST /internal/payment_methods`, for the customer portal: verifies and saves a card as the
   * hosted page's form does (same field rules, same test cards, nothing charged) and answers its
   * reusable reference (`pm_sandbox_...`), brand, last4 and expiry. A card the processor refuses
   * (a declining test card, a bad number, expiry or CVC, or one that asks for a challenge the
   * portal cannot show) is 402 with the reason at `card_number`.
   */
  app.post(
    '/internal/payment_methods',
    requireCaller,
    validate({ body: CreatePaymentMethodBody }),
    async (req, res) => {
      const caller = callerOf(req);
      const { processor } = dependenciesOf(context);
      // A card typed here goes to the simulator: refused for an organization on a processor of its own.
      await refuseUnlessChargeable(context, caller.organization, caller.environment);
      const body = res.locals.input.body as CreatePaymentMethodBody;
      const result = await processor.charge({
        idempotencyKey: `seti_${randomBase62(24)}`,
        environment: caller.environment,
        amount: 0,
        card: { number: body.card_number.replace(/\s+/g, ''), exp: body.exp, cvc: body.cvc },
        now: context.now(),
      });
      if (result.status !== 'succeeded') {
        const { code, message } =
          result.status === 'declined'
            ? result
            : { code: 'authentication_required', message: 'The card asks for a challenge step (3-D Secure)' };
        throw ApiError.of('payment_required', message, [{ path: 'card_number', code, message }]);
      }
      const saved: CreatedPaymentMethod = { object: 'payment_method', ...result.payment_method };
      res.status(201).json(saved);
    },
  );

  /**
   * `POST /internal/payment_methods/card_fields`, for the customer portal's card page: the
   * portal's own form for the simulator, PAYUNi's card fields for an organization on PAYUNi
   * (payuni-portal-cards.ts), none for one on ECPay. A PAYUNi that gives no SDK token is 503.
   */
  app.post(
    '/internal/payment_methods/card_fields',
    requireCaller,
    validate({ body: PortalCardFieldsBody }),
    async (req, res) => {
      const caller = callerOf(req);
      const body = res.locals.input.body as PortalCardFieldsBody;
      const own = await processorMerchantOf(context, caller.organization, caller.environment);
      if (own?.processor === 'ecpay') return res.json({ processor: 'ecpay' } satisfies PortalCardFields);
      if (!own) return res.json({ processor: 'sandbox' } satisfies PortalCardFields);
      const fields = await openPortalCardFields(context, caller, own.merchant, {
        customerId: body.customer_id,
        iframeDomain: body.iframe_domain,
      }).catch((error: unknown) => {
        if (error instanceof CardChargeUnanswered) throw new ApiError(503, 'processor_unavailable', error.message);
        throw error;
      });
      const answer: PortalCardFields = {
        processor: 'payuni',
        fields: {
          sdk_token: fields.sdkToken,
          script_url: fields.scriptUrl,
          bind_script_url: payuniFieldsScriptUrl(dependenciesOf(context).checkoutUrl),
          env: fields.env,
        },
      };
      res.json(answer);
    },
  );

  /** `POST /internal/payment_methods/payuni`: an overdue invoice charged to the card in the portal's PAYUNi fields, which is kept. */
  app.post(
    '/internal/payment_methods/payuni',
    requireCaller,
    validate({ body: PortalCardChargeBody }),
    async (req, res) => {
      const caller = callerOf(req);
      const body = res.locals.input.body as PortalCardChargeBody;
      const answer = await chargePortalCard(context, caller, await payuniMerchantOfCaller(context, caller), {
        customerId: body.customer_id,
        idempotencyKey: body.idempotency_key,
        amount: body.amount,
        description: body.description,
        ...(body.return_url ? { returnUrl: body.return_url } : {}),
      });
      res.status('object' in answer ? 201 : 202).json(answer);
    },
  );

  /** `POST /internal/payment_methods/payuni/result`: what came of a portal card sent to its bank (3-D Secure). */
  app.post(
    '/internal/payment_methods/payuni/result',
    requireCaller,
    validate({ body: PortalCardResultBody }),
    async (req, res) => {
      const caller = callerOf(req);
      const body = res.locals.input.body as PortalCardResultBody;
      const merchant = await payuniMerchantOfCaller(context, caller);
      const card = await portalCardResult(context, merchant, {
        customerId: body.customer_id,
        idempotencyKey: body.idempotency_key,
      });
      if (card) return res.status(201).json(card);
      res.status(202).json({ status: 'pending' });
    },
  );

  /** `POST /internal/payment_methods/payuni/verify`: the card in the portal's PAYUNi fields verified by NT$1 given back, and kept. */
  app.post(
    '/internal/payment_methods/payuni/verify',
    requireCaller,
    validate({ body: PortalCardVerifyBody }),
    async (req, res) => {
      const caller = callerOf(req);
      const body = res.locals.input.body as PortalCardVerifyBody;
      const merchant = await payuniMerchantOfCaller(context, caller);
      res.status(201).json(await verifyPortalCard(context, caller, merchant, body.customer_id));
    },
  );

  // PAYUNi's result of a portal card's 3-D Secure step, server to server: checked and recorded once.
  // A trade that went to no bank is answered in PAYUNi's reply to the charge, never posted.
  app.post('/checkout/:trade_no/payuni/card-notify', formBodies('16kb'), async (req, res) => {
    const challenge = await dependenciesOf(context).portalChallenges.findByTrade(String(req.params.trade_no));
    const refused = challenge !== null && !(await acceptPortalCardResult(context, challenge, req.body ?? {}));
    res
      .status(refused ? 400 : 200)
      .type('text')
      .send(refused ? 'Not a post of this merchant about this card' : 'OK');
  });

  // The customer's browser back from the bank, with PAYUNi's signed result: recorded as the post
  // is (the portal trusts only what checks out), then sent back to the portal's page.
  app.post('/checkout/:trade_no/payuni/card-return', formBodies('16kb'), async (req, res) => {
    const challenge = await dependenciesOf(context).portalChallenges.findByTrade(String(req.params.trade_no));
    if (!challenge) return res.status(404).type('text').send('No such card payment');
    await acceptPortalCardResult(context, challenge, req.body ?? {});
    res.redirect(303, challenge.returnUrl);
  });

  /** The same for up to 100 charges of one tenant at once (a batch of renewals); answers in order. */
  app.post('/internal/charges/batch', requireCaller, validate({ body: ChargeSavedCardsBody }), async (req, res) => {
    const caller = callerOf(req);
    const { processor } = dependenciesOf(context);
    const { charges } = res.locals.input.body as ChargeSavedCardsBody;
    const requests = charges.map((body) => savedCardRequest(context, caller.environment, body));
    const simulated = requests.filter((request) => !isAtProcessor(request.paymentMethodId));
    if (simulated.length > 0) refuseUnlessSimulated(processor, caller.environment);
    const simulatedResults =
      simulated.length === 0
        ? []
        : processor.chargeSavedCards
          ? await processor.chargeSavedCards(simulated)
          : await Promise.all(simulated.map((request) => processor.chargeSavedCard(request)));
    const byKey = new Map(simulated.map((request, i) => [request.idempotencyKey, simulatedResults[i]!]));
    // The organization's processor, read once for the batch.
    const own =
      simulated.length < requests.length
        ? await processorMerchantOf(context, caller.organization, caller.environment)
        : null;
    const results = await Promise.all(
      requests.map((request) => byKey.get(request.idempotencyKey) ?? chargeAtProcessor(context, caller, request, own)),
    );
    const answer: SavedCardCharges = {
      results: results.map((result, i) => answerOf(result, requests[i]!.idempotencyKey)),
    };
    res.json(answer);
  });
}

/**
 * A saved payment method charged without the buyer: at PAYUNi for its cards, a transfer code at
 * PAYUNi for a customer who pays by transfer, a period of ECPay's plan for its plans, else by the
 * simulator.
 */
async function chargeSavedCard(
  context: ServiceContext,
  caller: { organization: string; environment: Environment },
  request: SavedCardChargeRequest,
): Promise<InvoiceChargeResult> {
  if (isAtProcessor(request.paymentMethodId)) {
    return chargeAtProcessor(
      context,
      caller,
      request,
      await processorMerchantOf(context, caller.organization, caller.environment),
    );
  }
  const { processor } = dependenciesOf(context);
  refuseUnlessSimulated(processor, caller.environment);
  return processor.chargeSavedCard(request);
}

/**
 * A charge at the organization's processor (`own`, read once for a batch) of a method it keeps,
 * noted with its answer so that the processor is asked later whether it agrees (renewal-charges.ts).
 */
async function chargeAtProcessor(
  context: ServiceContext,
  caller: { organization: string; environment: Environment },
  request: SavedCardChargeRequest,
  own: ProcessorMerchant | null,
): Promise<InvoiceChargeResult> {
  await noteRenewalCharge(context.store, caller, request);
  const result = await chargeAtOwnProcessor(context, caller, request, own);
  await noteRenewalAnswer(context.store, request.idempotencyKey, result, context.now());
  return result;
}

function chargeAtOwnProcessor(
  context: ServiceContext,
  caller: { organization: string; environment: Environment },
  request: SavedCardChargeRequest,
  own: ProcessorMerchant | null,
): Promise<InvoiceChargeResult> {
  const payuni = own?.processor === 'payuni' ? own.merchant : null;
  const ecpay = own?.processor === 'ecpay' ? own.merchant : null;
  if (isEcpayPlan(request.paymentMethodId)) return chargeEcpayPlan(context, request, ecpay);
  if (isEcpayCodeMethod(request.paymentMethodId)) return chargeByEcpayCode(context, caller, request, ecpay);
  if (isPayuniCodeMethod(request.paymentMethodId)) return chargeByPayuniCode(context, caller, request, payuni);
  return chargePayuniSavedCard(context, caller, request, payuni);
}

/**
 * A key the simulator never answered: asked of PAYUNi, or of the ECPay plan it was asked of,
 * when the organization pays through it, else given up at the simulator when `release` (so the
 * answer is final), else unknown.
 */
async function unsimulatedStatus(
  context: ServiceContext,
  caller: { organization: string; environment: Environment },
  key: string,
  release: boolean,
): Promise<InvoiceChargeResult | null> {
  const own = await processorMerchantOf(context, caller.organization, caller.environment);
  if (own?.processor === 'payuni') {
    const code = await payuniCodeChargeStatus(context, own.merchant, key);
    return code ?? payuniChargeStatus(context, own.merchant, key, release);
  }
  if (own?.processor === 'ecpay') {
    const answer =
      (await ecpayCodeChargeStatus(context, own.merchant, key)) ??
      (await ecpayPlanChargeStatus(context, own.merchant, key, release));
    if (answer) return answer;
  }
  return release ? dependenciesOf(context).processor.release(key) : null;
}

function refuseUnlessSimulated(processor: PaymentProcessor, environment: Environment): void {
  const refusal = processor.refusal(environment);
  if (refusal) throw ApiError.of('payment_required', refusal);
}

function savedCardRequest(
  context: ServiceContext,
  environment: 'SANDBOX' | 'PRODUCTION',
  body: ChargeSavedCardBody,
): SavedCardChargeRequest {
  return {
    idempotencyKey: body.idempotency_key,
    environment,
    amount: body.amount,
    paymentMethodId: body.payment_method_id,
    now: context.now(),
  };
}

/** A charge's answer to billing; one that succeeded names its trade (`chargeTradeOf`). */
function answerOf(result: InvoiceChargeResult, chargeKey: string): SavedCardCharge {
  switch (result.status) {
    case 'succeeded':
      return { status: 'succeeded', ...chargeTradeOf(result.payment_method.id, chargeKey) };
    case 'declined':
      return { status: 'declined', code: result.code, message: result.message };
    case 'pending':
      return { status: 'pending', payment_instructions: result.payment_instructions };
    case 'requires_action':
      return { status: 'declined', code: 'authentication_required', message: 'The card asks for the buyer' };
  }
}

/**
 * The PAYUNi merchant of the caller's organization, for the portal's PAYUNi cards; 409 when it is
 * not on PAYUNi: refused before anything is charged, not a decline (billing counts no attempt).
 */
async function payuniMerchantOfCaller(
  context: ServiceContext,
  caller: { organization: string; environment: Environment },
) {
  const own = await processorMerchantOf(context, caller.organization, caller.environment);
  if (own?.processor !== 'payuni') throw conflict('The organization does not take cards through PAYUNi');
  return own.merchant;
}
