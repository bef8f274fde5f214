import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

/**
 * Plan switching through the gateway, on Sandbox test clocks (issue 14; rules in
 * docs/plan-switching.md): previews, immediate prorated switches charged on the saved card,
 * downgrades scheduled for the period's end and applied by the renewal, trials, declines, and
 * concurrency.
 */
describe('plan switching through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  let sk: string;
  const products: Record<string, string> = {};

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );

  /** A test clock at `at`, and the plan `slug` bought on it with `card`. */
  async function subscribeOnClock(email: string, slug: string, at: string, card = '4242424242424242') {
    const clock = (await send('POST', '/test_clocks', { frozen_time: at })).body;
    const session = await send('POST', '/checkout/sessions', {
      product_slug: slug,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
      test_clock: clock.id,
    });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: card, exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    const subscription = await eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      return found.body;
    });
    return { clock: clock.id as string, subscription };
  }

  async function advance(clock: string, to: string) {
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'));
  }
  const invoicesOf = async (subscriptionId: string) =>
    (await send('GET', `/invoices?subscription_id=${subscriptionId}`)).body.data.reverse();
  const preview = (id: string, target: string) =>
    send('GET', `/subscriptions/${id}/switch-preview?target_product_id=${target}`);
  const switchTo = (id: string, target: string, extra: Record<string, unknown> = {}) =>
    send('POST', `/subscriptions/${id}/switch`, { target_product_id: products[target] ?? target, ...extra });
  /** The sandbox's charges of an invoice (keys `<invoice>:<attempt>`). */
  async function chargesOf(invoiceId: string) {
    const store = platform.checkout!.service.context.store;
    const { rows } = await store.database.query<{ idempotency_key: string; status: string }>(
      `SELECT idempotency_key, result->>'status' AS status
       FROM ${store.tables.schema}.sandbox_charges WHERE split_part(idempotency_key, ':', 1) = $1`,
      [invoiceId],
    );
    return rows;
  }

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    const make = async (slug: string, fields: Record<string, unknown>) => {
      const created = await client.createProduct(org.id, plan({ slug, name: slug, ...fields }));
      expect(created.status).toBe(201);
      products[slug] = created.body.id;
    };
    await make('pro', { price: 299 });
    await make('business', { price: 599 });
    await make('basic', { price: 199 });
    await make('team', { price: 299 });
    await make('pro-yearly', { price: 2990, interval: 'year' });
    await make('trial', { price: 500, trial_days: 14 });
    await make('ebook', { type: 'ONE_TIME', interval: null, price: 100 });
    await make('retired', { price: 999 });
    await make('live-pro', { environment: 'PRODUCTION', price: 399 });
    expect(
      (await client.admin('PATCH', `/organizations/${org.id}/products/${products.retired}`, { active: false })).status,
    ).toBe(200);
  });
  afterAll(() => platform.stop());

  it('upgrades 299 to 599 on day 10 of 30: previews and charges exactly net 400, and starts a new period', async () => {
    const { clock, subscription } = await subscribeOnClock('upgrade@example.com', 'pro', '2026-04-01T00:00:00Z');
    await advance(clock, '2026-04-10T12:00:00Z');

    const seen = await preview(subscription.id, products.business!);
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual({
      object: 'switch_preview',
      subscription_id: subscription.id,
      switch_type: 'UPGRADE',
      execution_mode: 'immediate',
      current_plan: {
        product_id: products.pro,
        product_name: 'pro',
        amount: 299,
        currency: 'TWD',
        interval: 'month',
        interval_count: 1,
        monthly_equivalent: 299,
      },
      new_plan: {
        product_id: products.business,
        product_name: 'business',
        amount: 599,
        currency: 'TWD',
        interval: 'month',
        interval_count: 1,
        monthly_equivalent: 599,
      },
      proration: {
        credit_amount: 199,
        charge_amount: 599,
        net_amount: 400,
        unused_days: 20,
        total_days_in_period: 30,
        credit_description: 'Unused time on pro: 20 of 30 days of 299 TWD paid',
      },
      effective_date: '2026-04-10T12:00:00.000Z',
      next_billing_date: '2026-05-10T12:00:00.000Z',
      proration_behavior: 'create_prorations',
      requires_payment: true,
      can_proceed: true,
      blocking_reason: null,
      is_in_trial: false,
      trial_end: null,
      livemode: false,
    });
    // The preview changed nothing.
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toEqual(subscription);

    const switched = await switchTo(subscription.id, 'business');
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({
      object: 'subscription_switch',
      livemode: false,
      switch_type: 'UPGRADE',
      execution_mode: 'immediate',
      schedule: null,
      subscription: {
        product: { id: products.business },
        price: 599,
        status: 'ACTIVE',
        current_period_start: '2026-04-10T12:00:00.000Z',
        current_period_end: '2026-05-10T12:00:00.000Z',
      },
      invoice: { status: 'paid', subtotal: 400, discount_amount: 0, total: 400, amount_paid: 400 },
    });
    const invoice = switched.body.invoice;
    expect(invoice.lines.map((l: any) => [l.kind, l.amount])).toEqual([
      ['proration', -199],
      ['subscription', 599],
    ]);
    expect(await chargesOf(invoice.id)).toEqual([{ idempotency_key: `${invoice.id}:1`, status: 'succeeded' }]);

    // The next renewal bills the new plan, a month after the switch.
    await advance(clock, '2026-05-11T00:00:00Z');
    const invoices = await invoicesOf(subscription.id);
    expect(invoices.map((i: any) => [i.period_start, i.total])).toEqual([
      ['2026-04-01T00:00:00.000Z', 299],
      ['2026-04-10T12:00:00.000Z', 400],
      ['2026-05-10T12:00:00.000Z', 599],
    ]);
  });

  it('schedules a downgrade for the period end: visible, cancelable, then applied by the renewal at the lower price', async () => {
    const { clock, subscription } = await subscribeOnClock('downgrade@example.com', 'pro', '2026-04-01T00:00:00Z');
    await advance(clock, '2026-04-05T00:00:00Z');
    const seen = await preview(subscription.id, products.basic!);
    expect(seen.body).toMatchObject({
      switch_type: 'DOWNGRADE',
      execution_mode: 'scheduled',
      proration: null,
      effective_date: '2026-05-01T00:00:00.000Z',
      requires_payment: false,
      can_proceed: true,
    });

    const first = await switchTo(subscription.id, 'basic');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ execution_mode: 'scheduled', invoice: null, subscription: { price: 299 } });
    const schedule = first.body.schedule;
    expect(schedule).toMatchObject({
      object: 'subscription_schedule',
      subscription_id: subscription.id,
      target_product_id: products.basic,
      effective_date: '2026-05-01T00:00:00.000Z',
      status: 'pending',
    });
    expect(schedule.id).toMatch(/^sub_sched_/);
    expect((await send('GET', `/subscriptions/${subscription.id}/schedule`)).body).toEqual(schedule);

    // One pending schedule: a second scheduled switch is 409 naming it; the preview says why.
    const second = await switchTo(subscription.id, 'basic');
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'conflict', details: [{ schedule_id: schedule.id }] });
    expect(second.body.error.message).toContain(schedule.id);
    expect((await preview(subscription.id, products.team!)).body).toMatchObject({
      can_proceed: false,
      blocking_reason: 'pending_schedule',
    });

    // Canceled, and made again.
    const canceled = await send('DELETE', `/subscriptions/${subscription.id}/schedule`);
    expect(canceled.body).toMatchObject({ id: schedule.id, status: 'canceled' });
    expect((await send('DELETE', `/subscriptions/${subscription.id}/schedule`)).status).toBe(404);
    const again = await switchTo(subscription.id, 'basic');
    expect(again.status).toBe(200);

    await advance(clock, '2026-05-02T00:00:00Z');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      product: { id: products.basic },
      price: 199,
      status: 'ACTIVE',
      current_period_start: '2026-05-01T00:00:00.000Z',
      current_period_end: '2026-06-01T00:00:00.000Z',
    });
    expect((await send('GET', `/subscriptions/${subscription.id}/schedule`)).body).toMatchObject({
      id: again.body.schedule.id,
      status: 'completed',
    });
    const invoices = await invoicesOf(subscription.id);
    expect(invoices.map((i: any) => [i.period_start, i.total, i.status])).toEqual([
      ['2026-04-01T00:00:00.000Z', 299, 'paid'],
      ['2026-05-01T00:00:00.000Z', 199, 'paid'],
    ]);
  });

  it('month to year is immediate and prorated; year to month is scheduled', async () => {
    const monthly = await subscribeOnClock('to-year@example.com', 'pro', '2026-04-01T00:00:00Z');
    await advance(monthly.clock, '2026-04-10T12:00:00Z');
    const up = await switchTo(monthly.subscription.id, 'pro-yearly');
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({
      switch_type: 'PERIOD_CHANGE',
      execution_mode: 'immediate',
      proration: { credit_amount: 199, charge_amount: 2990, net_amount: 2791 },
      subscription: { interval: 'year', current_period_end: '2027-04-10T12:00:00.000Z' },
      invoice: { total: 2791 },
    });

    const yearly = await subscribeOnClock('to-month@example.com', 'pro-yearly', '2026-04-01T00:00:00Z');
    const down = await switchTo(yearly.subscription.id, 'pro');
    expect(down.body).toMatchObject({
      switch_type: 'PERIOD_CHANGE',
      execution_mode: 'scheduled',
      schedule: { effective_date: '2027-04-01T00:00:00.000Z', status: 'pending' },
      subscription: { interval: 'year' },
    });
  });

  it('a crossgrade changes the plan now and charges nothing', async () => {
    const { subscription } = await subscribeOnClock('crossgrade@example.com', 'pro', '2026-04-01T00:00:00Z');
    const switched = await switchTo(subscription.id, 'team');
    expect(switched.body).toMatchObject({
      switch_type: 'CROSSGRADE',
      execution_mode: 'immediate',
      proration: null,
      invoice: null,
      subscription: { product: { id: products.team }, current_period_end: subscription.current_period_end },
    });
    expect((await invoicesOf(subscription.id)).length).toBe(1);
  });

  it('a trial switch is immediate, charges nothing and keeps trial_end', async () => {
    const { subscription } = await subscribeOnClock('trial@example.com', 'trial', '2026-04-01T00:00:00Z');
    expect(subscription.status).toBe('TRIAL');
    const seen = await preview(subscription.id, products.business!);
    expect(seen.body).toMatchObject({
      execution_mode: 'immediate',
      proration: null,
      requires_payment: false,
      is_in_trial: true,
      trial_end: subscription.trial_end,
    });
    const switched = await switchTo(subscription.id, 'business');
    expect(switched.body).toMatchObject({
      invoice: null,
      subscription: { status: 'TRIAL', price: 599, trial_end: subscription.trial_end },
    });
    expect((await invoicesOf(subscription.id)).map((i: any) => i.total)).toEqual([0]);
  });

  it('a declined upgrade changes nothing and answers 402 with the decline reason', async () => {
    const { clock, subscription } = await subscribeOnClock(
      'declined@example.com',
      'pro',
      '2026-04-01T00:00:00Z',
      '4000000000000341',
    );
    await advance(clock, '2026-04-10T12:00:00Z');
    const before = (await send('GET', `/subscriptions/${subscription.id}`)).body;
    const switched = await switchTo(subscription.id, 'business');
    expect(switched.status).toBe(402);
    expect(switched.body.error).toMatchObject({ code: 'payment_required', details: [{ code: 'card_declined' }] });
    expect(switched.body.error.message).toContain('declined');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toEqual(before);
    expect((await invoicesOf(subscription.id)).length).toBe(1);
    // Not held: the preview says it may proceed.
    expect((await preview(subscription.id, products.business!)).body.can_proceed).toBe(true);
  });

  it('refuses targets: the current product, not a plan (400); archived, the other environment, absent (404 alike)', async () => {
    const { subscription } = await subscribeOnClock('refusals@example.com', 'pro', '2026-04-01T00:00:00Z');
    for (const [target, code] of [
      [products.pro, 'same_product'],
      [products.ebook, 'not_a_subscription_plan'],
    ] as const) {
      const seen = await preview(subscription.id, target!);
      expect([target, seen.status, seen.body.error.code, seen.body.error.details[0].code]).toEqual([
        target,
        400,
        'bad_request',
        code,
      ]);
    }
    // As checkout answers: a Sandbox key never learns that an id exists in Production.
    for (const target of [products.retired!, products['live-pro']!, 'prod_absent']) {
      for (const seen of [await preview(subscription.id, target), await switchTo(subscription.id, target)]) {
        expect([target, seen.status, seen.body.error]).toEqual([
          target,
          404,
          { code: 'not_found', message: `No such product: ${target}` },
        ]);
      }
    }
    expect((await preview('sub_absent', products.business!)).status).toBe(404);
    expect((await preview(subscription.id, '')).status).toBe(400);
    expect((await switchTo('sub_absent', 'business')).status).toBe(404);
  });

  it('a canceled or canceling subscription cannot proceed', async () => {
    const { subscription } = await subscribeOnClock('canceled@example.com', 'pro', '2026-04-01T00:00:00Z');
    await send('POST', `/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
    expect((await preview(subscription.id, products.business!)).body).toMatchObject({
      can_proceed: false,
      blocking_reason: 'cancel_at_period_end',
    });
    await send('POST', `/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
    expect((await preview(subscription.id, products.business!)).body).toMatchObject({
      can_proceed: false,
      blocking_reason: 'canceled',
    });
    expect((await switchTo(subscription.id, 'business')).status).toBe(409);
  });

  it('two concurrent switches of one subscription: one wins, the other is 409, one charge', async () => {
    const { clock, subscription } = await subscribeOnClock('race@example.com', 'pro', '2026-04-01T00:00:00Z');
    await advance(clock, '2026-04-10T12:00:00Z');
    const answers = await Promise.all([switchTo(subscription.id, 'business'), switchTo(subscription.id, 'pro-yearly')]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const won = answers.find((a) => a.status === 200)!.body;
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.product.id).toBe(won.subscription.product.id);
    const invoices = await invoicesOf(subscription.id);
    expect(invoices.length).toBe(2);
    expect(await chargesOf(won.invoice.id)).toHaveLength(1);
  });

  it('a switch racing a renewal leaves one consistent outcome and charges each invoice once', async () => {
    const outcomes = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const { clock, subscription } = await subscribeOnClock(
        `renewal-race-${i}@example.com`,
        'pro',
        '2026-04-01T00:00:00Z',
      );
      await advance(clock, '2026-04-30T23:59:00Z');
      const advancing = () => send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-05-01T00:00:30Z' });
      // Sent in either order, at once.
      const first = i % 2 === 0 ? switchTo(subscription.id, 'business') : advancing();
      const second = i % 2 === 0 ? advancing() : switchTo(subscription.id, 'business');
      const [a, b] = await Promise.all([first, second]);
      const switched = i % 2 === 0 ? a : b;
      await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'));
      const after = (await send('GET', `/subscriptions/${subscription.id}`)).body;
      const invoices = await invoicesOf(subscription.id);
      const periods = invoices.map((inv: any) => [inv.period_start, inv.total]);
      if (switched!.status === 409) {
        // The renewal went first: the old plan renewed, the switch refused.
        outcomes.add('renewed');
        expect(after).toMatchObject({ price: 299, current_period_start: '2026-05-01T00:00:00.000Z' });
        expect(periods).toEqual([
          ['2026-04-01T00:00:00.000Z', 299],
          ['2026-05-01T00:00:00.000Z', 299],
        ]);
      } else if (after.current_period_start === '2026-04-30T23:59:00.000Z') {
        // The switch went first: a new period of the new plan; nothing left to renew.
        outcomes.add('switched');
        expect(switched!.status).toBe(200);
        expect(after).toMatchObject({ price: 599, current_period_end: '2026-05-30T23:59:00.000Z' });
        expect(periods).toEqual([
          ['2026-04-01T00:00:00.000Z', 299],
          ['2026-04-30T23:59:00.000Z', 599],
        ]);
      } else {
        // The renewal finished before the switch started: the switch prorated the renewed period.
        outcomes.add('renewed, then switched');
        expect(switched!.status).toBe(200);
        expect(periods.slice(0, 2)).toEqual([
          ['2026-04-01T00:00:00.000Z', 299],
          ['2026-05-01T00:00:00.000Z', 299],
        ]);
        expect(periods).toHaveLength(3);
      }
      for (const invoice of invoices.filter((inv: any) => inv.checkout_session_id === null && inv.total > 0)) {
        expect(await chargesOf(invoice.id)).toEqual([{ idempotency_key: `${invoice.id}:1`, status: 'succeeded' }]);
      }
    }
    // Which outcomes the races had (each is consistent).
    console.log(`switch racing a renewal: ${[...outcomes].join(', ')}`);
    expect(outcomes.size).toBeGreaterThan(0);
  });

  describe("the organization's proration policy (admin API billing_settings)", () => {
    let mainKey: string;
    const policyProducts: Record<string, string> = {};
    beforeAll(async () => {
      const client = clientOf(platform.gatewayUrl);
      const other = await client.createOrganization('Policy');
      mainKey = sk;
      sk = other.api_keys.sandbox.secret_key;
      for (const [slug, price] of [
        ['pro', 299],
        ['business', 599],
        ['basic', 199],
      ] as const) {
        const created = await client.createProduct(other.id, plan({ slug, name: slug, price }));
        policyProducts[slug] = created.body.id;
      }
      const patched = await client.admin('PATCH', `/organizations/${other.id}/billing_settings?environment=sandbox`, {
        proration: { upgrade: 'bill_at_next_renewal', downgrade: 'now_with_credit' },
      });
      expect(patched.body.proration).toEqual({ upgrade: 'bill_at_next_renewal', downgrade: 'now_with_credit' });
    });
    afterAll(() => {
      sk = mainKey;
    });
    const balanceOf = async (customerId: string) =>
      (await send('GET', `/customers/${customerId}/balance`)).body.balance;

    it('bill_at_next_renewal: the upgrade is now, charges nothing now, and the next renewal adds the unused days difference', async () => {
      const { clock, subscription } = await subscribeOnClock('policy-up@example.com', 'pro', '2026-04-01T00:00:00Z');
      await advance(clock, '2026-04-10T12:00:00Z');
      const seen = await preview(subscription.id, policyProducts.business!);
      expect(seen.body).toMatchObject({
        switch_type: 'UPGRADE',
        execution_mode: 'immediate',
        proration: {
          credit_amount: 199,
          charge_amount: 399,
          net_amount: 200,
          unused_days: 20,
          total_days_in_period: 30,
        },
        next_billing_date: '2026-05-01T00:00:00.000Z',
        requires_payment: false,
        can_proceed: true,
      });
      const switched = await switchTo(subscription.id, policyProducts.business!);
      expect(switched.body).toMatchObject({
        invoice: null,
        subscription: { price: 599, current_period_end: '2026-05-01T00:00:00.000Z' },
      });
      expect(await balanceOf(subscription.customer_id)).toBe(-200);

      await advance(clock, '2026-05-02T00:00:00Z');
      const [, renewal] = await invoicesOf(subscription.id);
      expect(renewal).toMatchObject({ status: 'paid', total: 799, period_start: '2026-05-01T00:00:00.000Z' });
      expect(renewal.lines.map((l: any) => [l.kind, l.amount])).toEqual([
        ['subscription', 599],
        ['customer_balance', 200],
      ]);
      expect(await balanceOf(subscription.customer_id)).toBe(0);
    });

    it('now_with_credit: the downgrade is now, its negative net becomes balance, taken off the next renewal', async () => {
      const { clock, subscription } = await subscribeOnClock(
        'policy-down@example.com',
        'business',
        '2026-04-01T00:00:00Z',
      );
      await advance(clock, '2026-04-10T12:00:00Z');
      const switched = await switchTo(subscription.id, policyProducts.basic!);
      expect(switched.status).toBe(200);
      expect(switched.body).toMatchObject({
        switch_type: 'DOWNGRADE',
        execution_mode: 'immediate',
        proration: { credit_amount: 399, charge_amount: 199, net_amount: -200 },
        subscription: { price: 199, current_period_start: '2026-04-10T12:00:00.000Z' },
        invoice: { total: 0, amount_paid: 0 },
      });
      expect(switched.body.invoice.lines.map((l: any) => [l.kind, l.amount])).toEqual([
        ['proration', -399],
        ['subscription', 199],
        ['customer_balance', 200],
      ]);
      expect(await chargesOf(switched.body.invoice.id)).toEqual([]);
      expect(await balanceOf(subscription.customer_id)).toBe(200);

      await advance(clock, '2026-05-11T00:00:00Z');
      const renewal = (await invoicesOf(subscription.id)).at(-1);
      expect(renewal).toMatchObject({ status: 'paid', total: 0, period_start: '2026-05-10T12:00:00.000Z' });
      expect(renewal.lines.map((l: any) => [l.kind, l.amount])).toEqual([
        ['subscription', 199],
        ['customer_balance', -199],
      ]);
      expect(await balanceOf(subscription.customer_id)).toBe(1);
    });

    it('a refund after a downgrade credited the unused time gives back only what was not credited', async () => {
      const { clock, subscription } = await subscribeOnClock(
        'refund-down@example.com',
        'business',
        '2026-04-01T00:00:00Z',
      );
      await advance(clock, '2026-04-10T12:00:00Z');
      expect((await switchTo(subscription.id, policyProducts.basic!)).status).toBe(200);
      expect(await balanceOf(subscription.customer_id)).toBe(200);
      const [first] = await invoicesOf(subscription.id);
      expect(first).toMatchObject({ total: 599, amount_paid: 599, amount_credited: 399 });

      const full = await send('POST', '/refunds', { invoice_id: first.id, amount: 599 });
      expect(full.status).toBe(422);
      expect(full.body.error.details).toEqual([expect.objectContaining({ path: 'amount', code: 'amount_too_large' })]);
      expect(full.body.error.message).toContain('200 TWD of 599 TWD paid, 399 TWD of it given back as credit');
      const byOrder = await send('POST', '/refunds', { order_id: first.order_id, amount: 201 });
      expect(byOrder.status).toBe(422);
      const rest = await send('POST', '/refunds', { invoice_id: first.id });
      expect(rest.status).toBe(201);
      expect(rest.body).toMatchObject({ amount: 200, status: 'succeeded' });
      expect((await send('POST', '/refunds', { invoice_id: first.id, amount: 1 })).status).toBe(422);
    });
  });

  it('a refund after an upgrade prorated the unused time gives back only what the proration did not use', async () => {
    const { clock, subscription } = await subscribeOnClock('refund-up@example.com', 'pro', '2026-04-01T00:00:00Z');
    await advance(clock, '2026-04-10T12:00:00Z');
    const switched = await switchTo(subscription.id, 'business');
    expect(switched.body).toMatchObject({ proration: { credit_amount: 199 }, invoice: { total: 400 } });
    const [first] = await invoicesOf(subscription.id);
    expect(first).toMatchObject({ total: 299, amount_credited: 199 });
    const full = await send('POST', '/refunds', { invoice_id: first.id, amount: 299 });
    expect(full.status).toBe(422);
    const rest = await send('POST', '/refunds', { order_id: first.order_id });
    expect(rest.body).toMatchObject({ amount: 100 });
  });
});
