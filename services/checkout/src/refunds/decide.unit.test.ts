import { ApiError, type Refund } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { sessionAggregate } from '../sessions/aggregate';
import type { SessionCommand } from '../sessions/decide';
import type { CheckoutSessionCreatedData, SessionEvent } from '../sessions/session';
import { type InvoicePaid, type InvoicePaymentCommand, invoicePaymentAggregate } from './invoice-payment';
import type { RefundOrder } from './order';
import type { RefundEvent, RequestRefund, SettleRefund } from './refund';

const t0 = new Date('2026-03-01T00:00:00.000Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

/** The refund as the API shows it, for expected events. */
const refund = (id: string, amount: number, overrides: Partial<Refund> = {}): Refund => ({
  object: 'refund',
  id,
  amount,
  currency: 'TWD',
  reason: null,
  status: 'pending',
  failure_reason: null,
  order_id: null,
  invoice_id: 'in_1',
  checkout_session_id: null,
  created_at: at(1).toISOString(),
  livemode: false,
  ...overrides,
});

const request = (refundId: string, amount?: number, now = at(1)): RequestRefund['data'] => ({
  refundId,
  ...(amount === undefined ? {} : { amount }),
  reason: null,
  field: 'invoice_id',
  invoiceId: 'in_1',
  now,
});
const settle = (refundId: string, outcome: SettleRefund['data']['outcome'], now = at(2)): SettleRefund => ({
  type: 'SettleRefund',
  data: { refundId, outcome, now },
});
const ok = (refundId: string) => ({ status: 'succeeded' as const, processorRefundId: `sandbox_${refundId}` });

/** What `decide` throws, for its code and details. */
function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('Invoice payment (refunds of a renewal charge)', () => {
  const spec = deciderSpec(invoicePaymentAggregate);
  const paid: InvoicePaid = { invoiceId: 'in_1', amountPaid: 299, chargeKey: 'in_1:2', environment: 'SANDBOX' };
  const refundInvoice = (refundId: string, amount?: number, invoice = paid): InvoicePaymentCommand => ({
    type: 'RefundInvoice',
    data: { ...request(refundId, amount), invoice },
  });
  const created = (id: string, amount: number): RefundEvent => ({
    type: 'RefundCreated',
    data: {
      refund_id: id,
      amount,
      reason: null,
      order_id: null,
      invoice_id: 'in_1',
      checkout_session_id: null,
      charge_key: 'in_1:2',
      created_at: at(1).toISOString(),
      object: refund(id, amount),
    },
  });
  const succeeded = (id: string, amount: number): RefundEvent => ({
    type: 'RefundSucceeded',
    data: {
      refund_id: id,
      processor_refund_id: `sandbox_${id}`,
      succeeded_at: at(2).toISOString(),
      object: refund(id, amount, { status: 'succeeded' }),
    },
  });
  const failed = (id: string, amount: number): RefundEvent => ({
    type: 'RefundFailed',
    data: {
      refund_id: id,
      failure_reason: 'declined',
      failed_at: at(2).toISOString(),
      object: refund(id, amount, { status: 'failed', failure_reason: 'declined' }),
    },
  });

  describe('when nothing was refunded', () => {
    it('holds everything paid when no amount is given', () => {
      spec
        .given([])
        .when(refundInvoice('re_1'))
        .then([created('re_1', 299)]);
    });

    it('holds a part', () => {
      spec
        .given([])
        .when(refundInvoice('re_1', 100))
        .then([created('re_1', 100)]);
    });

    it('refuses more than was paid', () => {
      spec
        .given([])
        .when(refundInvoice('re_1', 300))
        .thenThrows(/more than is left to refund \(299 TWD of 299 TWD/);
      const error = refusal(() => invoicePaymentAggregate.decide(refundInvoice('re_1', 300), { refunds: [] }));
      expect(error).toMatchObject({ status: 422, code: 'validation_error' });
      expect(error.details).toEqual([expect.objectContaining({ path: 'amount', code: 'amount_too_large' })]);
    });

    it('refuses an invoice nothing was charged for', () => {
      const unpaid = { ...paid, amountPaid: 0 };
      const error = refusal(() => invoicePaymentAggregate.decide(refundInvoice('re_1', 1, unpaid), { refunds: [] }));
      expect(error.details).toEqual([expect.objectContaining({ path: 'invoice_id', code: 'not_paid' })]);
    });
  });

  describe('when part was refunded', () => {
    it('adds up: only what is left may be refunded, and by default all of it', () => {
      spec
        .given([created('re_1', 100), succeeded('re_1', 100)])
        .when(refundInvoice('re_2'))
        .then([created('re_2', 199)]);
      spec
        .given([created('re_1', 100), succeeded('re_1', 100)])
        .when(refundInvoice('re_2', 200))
        .thenThrows(/more than is left to refund \(199 TWD/);
    });

    it('holds a pending refund against the payment, so a concurrent one cannot pass it', () => {
      spec
        .given([created('re_1', 200)])
        .when(refundInvoice('re_2', 100))
        .thenThrows(/left to refund \(99 TWD/);
    });

    it('frees the amount of a refund the processor refused', () => {
      spec
        .given([created('re_1', 299), failed('re_1', 299)])
        .when(refundInvoice('re_2'))
        .then([created('re_2', 299)]);
    });

    it('says already_refunded when nothing is left', () => {
      const state = [created('re_1', 299), succeeded('re_1', 299)].reduce(
        invoicePaymentAggregate.evolve,
        invoicePaymentAggregate.initialState(),
      );
      const error = refusal(() => invoicePaymentAggregate.decide(refundInvoice('re_2', 1), state));
      expect(error.details).toEqual([expect.objectContaining({ path: 'invoice_id', code: 'already_refunded' })]);
    });

    it('decides nothing for the same refund id again (a retried request)', () => {
      spec
        .given([created('re_1', 299)])
        .when(refundInvoice('re_1'))
        .then([]);
    });
  });

  describe('when a plan switch credited part of the payment', () => {
    const credited = (refundId: string, credit: number, amount?: number): InvoicePaymentCommand => ({
      type: 'RefundInvoice',
      data: { ...request(refundId, amount), credited: credit, invoice: paid },
    });

    it('holds only what was neither refunded nor credited, by default', () => {
      spec
        .given([])
        .when(credited('re_1', 199))
        .then([created('re_1', 100)]);
    });

    it('refuses the full amount paid once the switch credited its unused time', () => {
      spec
        .given([])
        .when(credited('re_1', 199, 299))
        .thenThrows(/left to refund \(100 TWD of 299 TWD paid, 199 TWD of it given back as credit by a plan switch\)/);
    });

    it('counts refunds and credit together', () => {
      spec
        .given([created('re_1', 50), succeeded('re_1', 50)])
        .when(credited('re_2', 199, 51))
        .thenThrows(/left to refund \(50 TWD/);
    });

    it('says already_refunded when credit took everything paid', () => {
      const error = refusal(() => invoicePaymentAggregate.decide(credited('re_1', 299), { refunds: [] }));
      expect(error.details).toEqual([expect.objectContaining({ path: 'invoice_id', code: 'already_refunded' })]);
    });
  });

  describe('when the processor answers', () => {
    it('records a success once', () => {
      spec
        .given([created('re_1', 100)])
        .when(settle('re_1', ok('re_1')))
        .then([succeeded('re_1', 100)]);
      spec
        .given([created('re_1', 100), succeeded('re_1', 100)])
        .when(settle('re_1', ok('re_1')))
        .then([]);
    });

    it('records a refusal', () => {
      spec
        .given([created('re_1', 299)])
        .when(settle('re_1', { status: 'failed', message: 'declined' }))
        .then([failed('re_1', 299)]);
    });

    it('leaves an unknown refund alone', () => {
      spec
        .given([])
        .when(settle('re_9', ok('re_9')))
        .then([]);
    });
  });
});

describe('Order refunds on the checkout session', () => {
  const spec = deciderSpec(sessionAggregate);
  const createdData: CheckoutSessionCreatedData = {
    session_id: 'cs_1',
    organization: 'org_1',
    environment: 'SANDBOX',
    mode: 'PAYMENT',
    product: {
      id: 'prod_1',
      name: 'E-book',
      slug: 'e-book',
      type: 'ONE_TIME',
      price: 300,
      interval: null,
      interval_count: 1,
      trial_days: null,
    },
    success_url: 'https://shop.example/ok',
    cancel_url: 'https://shop.example/cancel',
    customer_email: 'buyer@example.com',
    customer_name: null,
    external_customer_id: null,
    collect_payment_method: 'always',
    requires_payment_method: true,
    metadata: null,
    einvoice: null,
    promotion_code: 'SPRING20',
    promotion_code_id: 'promo_1',
    redemption_id: 'red_1',
    discount: null,
    order: {
      id: 'ord_1',
      status: 'OPEN',
      product_id: 'prod_1',
      amount_subtotal: 300,
      discount_amount: 60,
      amount_total: 240,
      currency: 'TWD',
      metadata: null,
      created_at: t0.toISOString(),
      paid_at: null,
    },
    intent: {
      id: 'pi_1',
      kind: 'payment_intent',
      status: 'requires_payment_method',
      amount: 240,
      currency: 'TWD',
      client_secret: 'pi_1_secret_x',
      payment_method: null,
      last_payment_error: null,
      created_at: t0.toISOString(),
      succeeded_at: null,
    },
    created_at: t0.toISOString(),
    expires_at: at(30).toISOString(),
  };
  const open: SessionEvent[] = [{ type: 'CheckoutSessionCreated', data: createdData }];
  /** The session paid: its events as the decider makes them. */
  const paid: SessionEvent[] = (() => {
    const buyer = { email: null, name: null, customer_id: null };
    const events = [...open];
    const run = (command: SessionCommand) =>
      events.push(
        ...sessionAggregate.decide(command, events.reduce(sessionAggregate.evolve, sessionAggregate.initialState())),
      );
    run({ type: 'StartPayment', data: { sessionId: 'cs_1', attemptId: 'att_1', now: t0 } });
    run({
      type: 'RecordCharge',
      data: { attemptId: 'att_1', chargeKey: 'pi_1-1', paymentMethod: null, buyer, now: t0 },
    });
    run({ type: 'CompleteSession', data: { subscriptionId: null, now: t0 } });
    return events;
  })();
  const refundOrder = (refundId: string, amount?: number, now = at(1)): RefundOrder => ({
    type: 'RefundOrder',
    data: { ...request(refundId, amount, now), field: 'order_id', invoiceId: null },
  });
  const orderRefund = (id: string, amount: number, overrides: Partial<Refund> = {}) =>
    refund(id, amount, { order_id: 'ord_1', invoice_id: null, checkout_session_id: 'cs_1', ...overrides });
  const created = (id: string, amount: number): SessionEvent => ({
    type: 'RefundCreated',
    data: {
      refund_id: id,
      amount,
      reason: null,
      order_id: 'ord_1',
      invoice_id: null,
      checkout_session_id: 'cs_1',
      charge_key: 'pi_1-1',
      created_at: at(1).toISOString(),
      object: orderRefund(id, amount),
    },
  });
  const succeeded = (id: string, amount: number): SessionEvent => ({
    type: 'RefundSucceeded',
    data: {
      refund_id: id,
      processor_refund_id: `sandbox_${id}`,
      succeeded_at: at(2).toISOString(),
      object: orderRefund(id, amount, { status: 'succeeded' }),
    },
  });
  const orderRefunded: SessionEvent = {
    type: 'OrderRefunded',
    data: {
      order_id: 'ord_1',
      redemption_id: 'red_1',
      session_id: 'cs_1',
      refunded_at: at(2).toISOString(),
      object: {
        object: 'order',
        id: 'ord_1',
        status: 'REFUNDED',
        checkout_session_id: 'cs_1',
        product_id: 'prod_1',
        amount_total: 240,
        amount_refunded: 240,
        currency: 'TWD',
        refund_reason: null,
        metadata: null,
        refunded_at: at(2).toISOString(),
        updated_at: at(2).toISOString(),
        livemode: false,
      },
    },
  };

  describe('when the order is not paid', () => {
    it('refuses: nothing was paid', () => {
      spec
        .given(open)
        .when(refundOrder('re_1'))
        .thenThrows(/Nothing was paid/);
    });

    it('is 404 for a session that does not exist', () => {
      spec
        .given([])
        .when(refundOrder('re_1'))
        .thenThrows(/No such order/);
    });
  });

  describe('when the order is paid', () => {
    it('holds the order total by default, and the charge key of the session', () => {
      spec
        .given(paid)
        .when(refundOrder('re_1'))
        .then([created('re_1', 240)]);
    });

    it('refuses more than the order total', () => {
      spec
        .given(paid)
        .when(refundOrder('re_1', 241))
        .thenThrows(/more than is left to refund \(240 TWD/);
    });

    it('leaves the order PAID after a partial refund: no order.refunded, the redemption stands', () => {
      spec
        .given([...paid, created('re_1', 100)])
        .when(settle('re_1', ok('re_1')))
        .then([succeeded('re_1', 100)]);
    });

    it('refunds the order when the refunds given back reach its total', () => {
      spec
        .given([...paid, created('re_1', 100), succeeded('re_1', 100), created('re_2', 140)])
        .when(settle('re_2', ok('re_2')))
        .then([succeeded('re_2', 140), orderRefunded]);
    });

    it('refunds the order on a full refund at once', () => {
      spec
        .given([...paid, created('re_1', 240)])
        .when(settle('re_1', ok('re_1')))
        .then([succeeded('re_1', 240), orderRefunded]);
    });

    it('keeps the order paid while refunds are only pending', () => {
      const state = [...paid, created('re_1', 240)].reduce(sessionAggregate.evolve, sessionAggregate.initialState());
      expect(state.status === 'Exists' && state.session.order).toMatchObject({ status: 'PAID', amount_refunded: 0 });
    });
  });

  describe('when the order is refunded in full', () => {
    it('refuses another refund, also after billing refunded a duplicate subscription at once', () => {
      spec
        .given([...paid, created('re_1', 240), succeeded('re_1', 240), orderRefunded])
        .when(refundOrder('re_2', 1))
        .thenThrows(/refunded in full/);
      spec
        .given([...paid, { ...orderRefunded, data: { ...orderRefunded.data, reason: 'duplicate_subscription' } }])
        .when(refundOrder('re_2'))
        .thenThrows(/refunded in full/);
    });
  });
});
