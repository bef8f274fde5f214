'use strict';
// What checkout publishes for a paid SUBSCRIPTION checkout, for the benchmarks that feed
// billing directly (renewals, growth): one monthly Sandbox plan at NT$299, the card it saved.
const { randomBytes } = require('node:crypto');
const { newId } = require('@billing/contracts');
const { newEventId } = require('@billing/eventstore');

const plan = {
  id: newId('product'),
  name: 'Pro',
  slug: 'pro',
  type: 'SUBSCRIPTION',
  interval: 'month',
  interval_count: 1,
  price: 299,
  trial_days: null,
};

/**
 * `checkout.completed` of buyer `i` (`buyer-<i>@example.com`) for `product` (by default a plan
 * no catalog holds), on test clock `clockId` when given.
 */
function paidCheckout(organization, i, clockId = null, product = plan) {
  const session = newId('checkoutSession');
  const at = new Date().toISOString();
  return {
    // Time-ordered, as the event store makes them: the consumers' inboxes are keyed by it.
    id: newEventId(),
    type: 'checkout.completed',
    schema_version: 1,
    stream: `checkout_session-${session}`,
    stream_version: 1,
    global_position: i + 1,
    occurred_at: at,
    organization,
    environment: 'SANDBOX',
    data: {
      session_id: session,
      order_id: newId('order'),
      organization,
      environment: 'SANDBOX',
      mode: 'SUBSCRIPTION',
      customer_id: null,
      customer_email: `buyer-${i}@example.com`,
      customer_name: 'Buyer',
      external_customer_id: null,
      product_id: product.id,
      amount_subtotal: product.price,
      amount_total: product.price,
      discount_amount: 0,
      currency: 'TWD',
      promotion_code_id: null,
      redemption_id: null,
      metadata: null,
      completed_at: at,
      product,
      ...(clockId ? { test_clock: clockId } : {}),
      payment_method: {
        id: `pm_sandbox_ok_4242_122034_${randomBytes(8).toString('hex')}`,
        brand: 'visa',
        last4: '4242',
        exp_month: 12,
        exp_year: 2034,
      },
    },
  };
}

module.exports = { plan, paidCheckout };
