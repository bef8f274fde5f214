import { z } from 'zod';
import { PaymentInstructions } from './sessions';

/**
 * Internal, billing to checkout (which owns the payment processor): charge a card saved at
 * checkout without the buyer, for a renewal. One charge per `idempotency_key` however often
 * it is asked (billing keys by invoice and attempt).
 */
export const ChargeSavedCardBody = z
  .strictObject({
    payment_method_id: z.string().min(1).max(255),
    amount: z.int().min(1).describe('TWD'),
    idempotency_key: z.string().min(1).max(255),
  })
  .meta({ id: 'ChargeSavedCardBody' });
export type ChargeSavedCardBody = z.infer<typeof ChargeSavedCardBody>;

/**
 * Several such charges in one call (a batch of renewals), at most 100; each is the charge
 * `ChargeSavedCardBody` describes, once per key, and the answers come in the same order.
 */
export const ChargeSavedCardsBody = z
  .strictObject({ charges: z.array(ChargeSavedCardBody).min(1).max(100) })
  .meta({ id: 'ChargeSavedCardsBody' });
export type ChargeSavedCardsBody = z.infer<typeof ChargeSavedCardsBody>;

/** Who charged a payment and under what trade, as the processor's back office names it. */
export const ChargeTrade = z
  .object({
    processor: z.enum(['sandbox', 'ecpay', 'payuni']).describe('The sandbox simulator, ECPay or PAYUNi'),
    processor_reference: z
      .string()
      .describe(
        "ECPay's MerchantTradeNo (of the card's periodic plan), PAYUNi's MerTradeNo, the simulator's charge key",
      ),
  })
  .meta({ id: 'ChargeTrade' });
export type ChargeTrade = z.infer<typeof ChargeTrade>;

/** A charge that succeeded, with its trade when the answer names one (a checkout before this field does not). */
const SucceededCharge = z.object({ status: z.literal('succeeded'), ...ChargeTrade.partial().shape });

/**
 * A charge's answer. `pending`: the payment method is a transfer the buyer makes (an ATM
 * account or a store code issued for the invoice), to be paid by `payment_instructions.expires_at`;
 * asked again under the same key it answers the same instructions until it is paid (`succeeded`)
 * or the deadline passes (`declined`, `payment_deadline_passed`).
 */
export const SavedCardCharge = z
  .discriminatedUnion('status', [
    SucceededCharge,
    z.object({ status: z.literal('declined'), code: z.string(), message: z.string() }),
    z.object({ status: z.literal('pending'), payment_instructions: PaymentInstructions }),
  ])
  .meta({ id: 'SavedCardCharge' });
export type SavedCardCharge = z.infer<typeof SavedCardCharge>;

/**
 * Internal, billing to checkout: what the processor answered the charge under `idempotency_key`
 * (the status query by the platform's key, docs/lost-answers.md). `release_if_absent` closes a
 * key that was never answered: a charge under it asked later charges nothing and answers the
 * release (`attempt_released`), so an attempt given up is given up at the processor too.
 */
export const ChargeStatusBody = z
  .strictObject({
    idempotency_key: z.string().min(1).max(255),
    release_if_absent: z.boolean().default(false),
  })
  .meta({ id: 'ChargeStatusBody' });
export type ChargeStatusBody = z.input<typeof ChargeStatusBody>;

/** The answer kept under a key (as `SavedCardCharge`), or `not_found`: nothing was ever charged under it. */
export const ChargeStatus = z
  .discriminatedUnion('status', [
    SucceededCharge,
    z.object({ status: z.literal('declined'), code: z.string(), message: z.string() }),
    z.object({ status: z.literal('pending'), payment_instructions: PaymentInstructions }),
    z.object({ status: z.literal('not_found') }),
  ])
  .meta({ id: 'ChargeStatus' });
export type ChargeStatus = z.infer<typeof ChargeStatus>;

/** A card saved at checkout, as billing keeps it on the customer: never the number. */
export const SavedPaymentMethod = z
  .object({
    id: z.string().describe('The processor reference, pm_'),
    brand: z.string(),
    last4: z.string(),
    exp_month: z.int(),
    exp_year: z.int(),
  })
  .meta({ id: 'SavedPaymentMethod' });
export type SavedPaymentMethod = z.infer<typeof SavedPaymentMethod>;

export const SavedCardCharges = z.object({ results: z.array(SavedCardCharge) }).meta({ id: 'SavedCardCharges' });
export type SavedCardCharges = z.infer<typeof SavedCardCharges>;

/**
 * `POST /internal/payment_methods` (checkout, for the customer portal): a card to save, with
 * the hosted page's rules for each field. The processor verifies it (nothing is charged) and
 * answers its reusable reference.
 */
export const CreatePaymentMethodBody = z
  .strictObject({
    card_number: z
      .string()
      .max(23)
      .regex(/^[0-9 ]{12,23}$/, 'card number digits'),
    exp: z
      .string()
      .max(16)
      .regex(/^(0[1-9]|1[0-2])\s*\/\s*([0-9]{2})$/, 'MM/YY'),
    cvc: z
      .string()
      .max(4)
      .regex(/^[0-9]{3,4}$/, '3 or 4 digits'),
  })
  .meta({ id: 'CreatePaymentMethodBody' });
export type CreatePaymentMethodBody = z.infer<typeof CreatePaymentMethodBody>;

/**
 * `POST /internal/payment_methods/card_fields` (checkout, for the customer portal): where the
 * customer's new card is typed. `iframe_domain` is the origin of the portal's page.
 */
export const PortalCardFieldsBody = z
  .strictObject({
    customer_id: z.string().min(1).max(64),
    iframe_domain: z.url({ protocol: /^https?$/ }).max(255),
  })
  .meta({ id: 'PortalCardFieldsBody' });
export type PortalCardFieldsBody = z.infer<typeof PortalCardFieldsBody>;

/**
 * Its answer: the portal's own card form (`sandbox`, saved by `POST /internal/payment_methods`),
 * PAYUNi's card fields with their SDK token, or none (`ecpay`: ECPay keeps the card of its plan).
 */
export const PortalCardFields = z
  .discriminatedUnion('processor', [
    z.object({ processor: z.literal('sandbox') }),
    z.object({
      processor: z.literal('payuni'),
      fields: z.object({
        sdk_token: z.string(),
        script_url: z.string().describe("PAYUNi's uni-payment.js"),
        bind_script_url: z.string().describe("Checkout's script that binds the card and posts the form"),
        env: z.enum(['S', 'P']),
      }),
    }),
    z.object({ processor: z.literal('ecpay') }),
  ])
  .meta({ id: 'PortalCardFields' });
export type PortalCardFields = z.infer<typeof PortalCardFields>;

/**
 * `POST /internal/payment_methods/payuni` (checkout, for the customer portal): charge the card
 * typed into the customer's PAYUNi card fields for an overdue invoice, under the key billing's
 * retry of that invoice uses, and keep it. Answers the kept card (201, `CreatedPaymentMethod`),
 * or, when the card's bank asks for the customer (3-D Secure) and a `return_url` was given, 202
 * `PortalCardChallenge`: the customer goes to the bank and comes back to `return_url`, where
 * `POST /internal/payment_methods/payuni/result` tells what came of it.
 */
export const PortalCardChargeBody = z
  .strictObject({
    customer_id: z.string().min(1).max(64),
    idempotency_key: z.string().min(1).max(255),
    amount: z.int().positive(),
    description: z.string().min(1).max(200),
    return_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
  })
  .meta({ id: 'PortalCardChargeBody' });
export type PortalCardChargeBody = z.infer<typeof PortalCardChargeBody>;

/** The bank asks for the customer (3-D Secure): where to send them. */
export const PortalCardChallenge = z
  .object({ status: z.literal('requires_action'), redirect_url: z.string() })
  .meta({ id: 'PortalCardChallenge' });
export type PortalCardChallenge = z.infer<typeof PortalCardChallenge>;

/**
 * `POST /internal/payment_methods/payuni/result` (checkout, for the customer portal): what came
 * of a portal card's charge that went to 3-D Secure: the kept card (201), declined (402), or not
 * known yet (202: PAYUNi has not said; the pending charge is the reconciler's). 404 for a key no
 * such charge was made under for the customer.
 */
export const PortalCardResultBody = z
  .strictObject({ customer_id: z.string().min(1).max(64), idempotency_key: z.string().min(1).max(255) })
  .meta({ id: 'PortalCardResultBody' });
export type PortalCardResultBody = z.infer<typeof PortalCardResultBody>;

/**
 * `POST /internal/payment_methods/payuni/verify` (checkout, for the customer portal, nothing due):
 * the card typed into the customer's PAYUNi card fields verified by NT$1 given back at once, and
 * kept. Answers the kept card (201, `CreatedPaymentMethod`).
 */
export const PortalCardVerifyBody = z
  .strictObject({ customer_id: z.string().min(1).max(64) })
  .meta({ id: 'PortalCardVerifyBody' });
export type PortalCardVerifyBody = z.infer<typeof PortalCardVerifyBody>;

/** The saved card `POST /internal/payment_methods` answers (201). */
export const CreatedPaymentMethod = SavedPaymentMethod.extend({ object: z.literal('payment_method') }).meta({
  id: 'CreatedPaymentMethod',
});
export type CreatedPaymentMethod = z.infer<typeof CreatedPaymentMethod>;

/**
 * `PUT /internal/customers/{id}/default_payment_method` (billing, for the customer portal):
 * the card renewals charge from now on, as `POST /internal/payment_methods` answered it (the
 * whole card, or only its `pm_` reference when it is a sandbox one, which carries last4 and
 * expiry).
 */
export const SetDefaultPaymentMethodBody = z
  .strictObject({
    payment_method: z.union([
      SavedPaymentMethod.extend({
        object: z.literal('payment_method').optional(),
        id: z.string().min(1).max(255),
        brand: z.string().max(32),
        last4: z
          .string()
          .length(4)
          .regex(/^[0-9]{4}$/),
      }),
      z.string().min(1).max(255),
    ]),
  })
  .meta({ id: 'SetDefaultPaymentMethodBody' });
export type SetDefaultPaymentMethodBody = z.infer<typeof SetDefaultPaymentMethodBody>;
