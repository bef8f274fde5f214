/**
 * Public events: the dotted lowercase types that travel on Kafka and in webhooks. Inside a
 * service the stream events are PascalCase; its relay publishes the ones listed here under
 * their public name and every other event under its internal name (consumed by other services,
 * not by merchants). The `data` of a public event carries `object`, the resource as the public
 * API shows it after the change, so that notifications can send it without reading the
 * owner's tables.
 */

/** checkout.events */
export const CHECKOUT_PUBLIC_EVENTS = {
  /** Occurs when a checkout session is paid (or set up) and its order exists; the provisioning trigger. */
  CheckoutSessionCompleted: 'checkout.completed',
  /** Occurs when an ATM account or convenience-store code was opened for the session: `payment_instructions` say how to pay. */
  CheckoutAsyncPaymentPending: 'checkout.async_payment_pending',
  /** Occurs when an ATM or convenience-store payment passed its deadline unpaid (the session expires too). */
  CheckoutAsyncPaymentExpired: 'checkout.async_payment_expired',
  /** Occurs when an open checkout session passes `expires_at` unpaid. */
  CheckoutSessionExpired: 'checkout.expired',
  /** Occurs when a paid order is refunded. */
  OrderRefunded: 'order.refunded',
  /** Occurs when a refund is created: its amount is held against the payment while the processor is asked. */
  RefundCreated: 'refund.created',
  /** Occurs when the processor gave a refund's money back (`status` succeeded). */
  RefundSucceeded: 'refund.updated',
  /** Occurs when the processor refused a refund; its amount may be refunded again. */
  RefundFailed: 'refund.failed',
} as const;

/** billing.events */
export const BILLING_PUBLIC_EVENTS = {
  /** Occurs when a customer is created, by a paid checkout or otherwise. */
  CustomerCreated: 'customer.created',
  /** Occurs when a customer's name, external id, metadata or status changes. */
  CustomerUpdated: 'customer.updated',
  /** Occurs when a subscription starts, in TRIAL or ACTIVE. */
  SubscriptionActivated: 'subscription.activated',
  /** Occurs when a subscription's status, period, plan or cancellation changes. */
  SubscriptionUpdated: 'subscription.updated',
  /** Occurs when a subscription ends, on request or at the end of its period. */
  SubscriptionCanceled: 'subscription.canceled',
  /** Occurs when a renewal is paid and the subscription enters its next period. */
  SubscriptionRenewed: 'subscription.renewed',
  /** Occurs when a renewal charge fails: the subscription is PAST_DUE while retries run. */
  SubscriptionPastDue: 'subscription.past_due',
  /** Occurs 3 days before a trial ends (at once when the trial is shorter), once per trial. */
  SubscriptionTrialWillEnd: 'subscription.trial_will_end',
  /** Occurs 7 days before a yearly subscription renews, once per period. */
  SubscriptionRenewalUpcoming: 'subscription.renewal_upcoming',
  /** Occurs when an invoice is paid. */
  InvoicePaid: 'invoice.paid',
  /** Occurs when charging an invoice fails; it stays open while retries run. */
  InvoicePaymentFailed: 'invoice.payment_failed',
  /** Occurs when dunning's last retry failed and the invoice will not be charged again: `status` `uncollectible`. */
  InvoiceMarkedUncollectible: 'invoice.marked_uncollectible',
  /** Occurs when an invoice waits for the customer to pay by transfer: the ATM account or store code, and its deadline. */
  InvoicePaymentPending: 'invoice.payment_action_required',
  /** Occurs when a refund of an invoice's payment succeeds, in full or in part (`amount_refunded`). */
  InvoiceRefunded: 'invoice.refunded',
  /** Occurs when the provider issued an e-invoice (電子發票) for a paid order or invoice. */
  EinvoiceIssued: 'einvoice.issued',
  /** Occurs when an e-invoice was voided (作廢) after a full refund. */
  EinvoiceVoided: 'einvoice.voided',
  /** Occurs when an allowance (折讓) was issued on an e-invoice for a refund. */
  EinvoiceAllowanceIssued: 'einvoice.allowance_issued',
  /** Occurs when an attempt to issue, void or allowance failed; it is tried again. */
  EinvoiceAttemptFailed: 'einvoice.failed',
  /** Occurs once when an e-invoice is still not issued close to its legal deadline. */
  EinvoiceDeadlineApproaching: 'einvoice.deadline_approaching',
  /** Occurs when a switch is scheduled for the end of the period (a pending subscription schedule). */
  SubscriptionScheduleCreated: 'subscription_schedule.created',
  /** Occurs when a pending subscription schedule is canceled. */
  SubscriptionScheduleCanceled: 'subscription_schedule.canceled',
  /** Occurs when a subscription schedule is applied at the end of the period. */
  SubscriptionScheduleCompleted: 'subscription_schedule.completed',
  /** Occurs when credits are granted to a customer: by a purchase, an allowance or the merchant. */
  CreditsGranted: 'credits.granted',
  /** Occurs when a customer's credits are spent. */
  CreditsSpent: 'credits.spent',
  /** Occurs when the merchant takes credits back (by the API, the dashboard or a refund). */
  CreditsAdjusted: 'credits.adjusted',
  /** Occurs when a grant expires with credits left on it. */
  CreditsExpired: 'credits.expired',
  /** Occurs when a change takes a customer's balance below the organization's low-balance threshold. */
  CreditsLowBalance: 'credits.low_balance',
} as const;

/** promotions.events */
export const PROMOTIONS_PUBLIC_EVENTS = {
  /** Occurs when a promotion code's redemption becomes ACTIVE because its checkout was paid. */
  PromotionCodeRedeemed: 'promotion_code.redeemed',
} as const;

type ValuesOf<T> = T[keyof T];
export type PublicEventType =
  | ValuesOf<typeof CHECKOUT_PUBLIC_EVENTS>
  | ValuesOf<typeof BILLING_PUBLIC_EVENTS>
  | ValuesOf<typeof PROMOTIONS_PUBLIC_EVENTS>;

/** Every public event type, for webhook endpoint subscriptions. */
export const PUBLIC_EVENT_TYPES = [
  ...Object.values(CHECKOUT_PUBLIC_EVENTS),
  ...Object.values(BILLING_PUBLIC_EVENTS),
  ...Object.values(PROMOTIONS_PUBLIC_EVENTS),
] as readonly PublicEventType[];
