import { z } from 'zod';
import { SubscriptionStatus } from './billing';

/**
 * One buyer is one customer in every service (docs/customer-identity.md). Billing owns the
 * customer; checkout asks it who the buyer is through these internal calls, and passes the
 * answer on to promotions and in `checkout.completed`.
 */

/** The names a buyer can be known by. Precedence when several are given: customer_id, external_id, email. */
export const BuyerNames = z.strictObject({
  customer_id: z.string().min(1).max(255).optional(),
  external_id: z.string().min(1).max(255).optional(),
  email: z.string().min(1).max(320).optional(),
});
export type BuyerNames = z.infer<typeof BuyerNames>;

/**
 * `POST /internal/customers/resolve`: the customer the names point to, or, with `create` and an
 * email, a new customer (the buyer submitted the payment form). A found customer is never
 * changed. `product_id` also asks for the customer's live subscription to that product.
 */
export const ResolveCustomerBody = BuyerNames.extend({
  name: z.string().max(255).optional(),
  create: z.boolean().default(false),
  product_id: z.string().min(1).max(255).optional(),
  /** Sandbox: the session's test clock; a customer created now is put on it. */
  test_clock: z.string().min(1).max(255).optional(),
});
export type ResolveCustomerBody = z.infer<typeof ResolveCustomerBody>;

/** The buyer as billing knows them; `customer` null when nobody matches and nothing was created. */
export const ResolvedCustomer = z.object({
  customer: z
    .object({
      id: z.string(),
      email: z.string(),
      external_id: z.string().nullable(),
    })
    .nullable(),
  /** The customer's ACTIVE, TRIAL or PAST_DUE subscription to `product_id`, when asked. */
  live_subscription: z.object({ id: z.string(), status: SubscriptionStatus }).nullable(),
});
export type ResolvedCustomer = z.infer<typeof ResolvedCustomer>;

/** Emails name one buyer whatever their case or surrounding spaces. */
export const emailKey = (email: string) => email.trim().toLowerCase();
