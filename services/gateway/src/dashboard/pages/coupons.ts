import { html } from '@billing/service';
import { twd, when } from '../html';
import { type DashboardPage, buttonForm, errorFor, field, formFields, pager, select, table } from '../page';
import { historySection } from './history';
import { isoFrom, num, prefill, text } from './forms';

interface Coupon {
  id: string;
  name: string;
  discount_type: string;
  discount_amount: number;
  duration: string;
  duration_in_months: number | null;
  active: boolean;
  created_at: string;
}
interface PromotionCode {
  id: string;
  code: string;
  coupon_id: string;
  active: boolean;
  valid_until: string | null;
  max_redemptions: number | null;
  current_redemptions: number;
  created_at: string;
}

const CODES_PER_PAGE = 20;
const discountText = (c: Coupon) =>
  c.discount_type === 'PERCENTAGE'
    ? `${c.discount_amount}% off`
    : c.discount_type === 'FIXED_AMOUNT'
      ? `${twd(c.discount_amount)} off`
      : `first period at ${twd(c.discount_amount)}`;
const durationText = (c: Coupon) => (c.duration === 'repeating' ? `${c.duration_in_months} months` : c.duration);

export const couponsPage: DashboardPage = {
  path: 'coupons',
  section: 'coupons',
  title: () => 'Coupons and promotion codes',
  async view(ctx, state) {
    const coupons = await ctx.api.v1<{ data: Coupon[]; has_more: boolean }>(
      'GET',
      `/coupons?limit=50${ctx.query.after ? `&starting_after=${encodeURIComponent(ctx.query.after)}` : ''}`,
    );
    const offset = Math.max(0, Number(ctx.query.codes_offset) || 0);
    const codes = await ctx.api.v1<{ data: { promotion_codes: PromotionCode[]; total: number } }>(
      'GET',
      `/promotion-codes?limit=${CODES_PER_PAGE}&offset=${offset}`,
    );
    const couponName = new Map(coupons.data.map((c) => [c.id, c.name]));
    const couponRows = coupons.data.map(
      (c) =>
        html`<tr>
          <td>${c.name}</td>
          <td>${discountText(c)}</td>
          <td>${durationText(c)}</td>
          <td>${c.active ? 'Active' : 'Inactive'}</td>
          <td>${when(c.created_at)}</td>
          <td>
            ${
              c.active
                ? buttonForm(
                    ctx,
                    'deactivate-coupon',
                    'Deactivate',
                    { coupon_id: c.id },
                    { accessibleName: `Deactivate coupon ${c.name}`, confirm: `Deactivate ${c.name}?` },
                  )
                : ''
            }
          </td>
        </tr>`,
    );
    const codeRows = codes.data.promotion_codes.map(
      (p) =>
        html`<tr>
          <td><a href="${ctx.base}/promotion-codes/${p.id}">${p.code}</a></td>
          <td>${couponName.get(p.coupon_id) ?? p.coupon_id}</td>
          <td>${p.current_redemptions}${p.max_redemptions ? ` / ${p.max_redemptions}` : ''}</td>
          <td>${p.active ? 'Active' : 'Inactive'}</td>
          <td>${when(p.valid_until)}</td>
          <td>
            ${
              p.active
                ? buttonForm(
                    ctx,
                    'deactivate-code',
                    'Deactivate',
                    { code_id: p.id },
                    { accessibleName: `Deactivate code ${p.code}`, confirm: `Deactivate ${p.code}?` },
                  )
                : ''
            }
          </td>
        </tr>`,
    );
    const v = (name: string) => prefill(state.form, name);
    const activeCoupons = coupons.data.filter((c) => c.active);
    return html`<h2 id="coupons">Coupons</h2>
      ${errorFor(state, 'deactivate-coupon')}
      ${table('Coupons', ['Name', 'Discount', 'Duration', 'Status', 'Created', ''], couponRows, 'No coupons yet.')}${pager(ctx, coupons.has_more, coupons.data.at(-1)?.id)}
      <form class="card" method="post" aria-labelledby="create-coupon">
        <h3 id="create-coupon">Create a coupon</h3>
        ${formFields(ctx, 'create-coupon')}${errorFor(state, 'create-coupon')}
        ${field('c-name', 'Name', { name: 'name', value: v('name'), required: true })}
        ${select(
          'c-type',
          'Discount type',
          'discount_type',
          [
            ['PERCENTAGE', 'Percentage'],
            ['FIXED_AMOUNT', 'Fixed amount (TWD)'],
            ['FIRST_PERIOD_PRICE', 'First period price (TWD)'],
          ],
          v('discount_type'),
        )}
        ${field('c-amount', 'Amount (percent or whole TWD)', { name: 'discount_amount', type: 'number', value: v('discount_amount'), required: true, extra: html` min="0"` })}
        ${select(
          'c-duration',
          'Duration',
          'duration',
          [
            ['once', 'Once'],
            ['repeating', 'Several months'],
            ['forever', 'Forever'],
          ],
          v('duration'),
        )}
        ${field('c-months', 'Months (when several months)', { name: 'duration_in_months', type: 'number', value: v('duration_in_months'), extra: html` min="1"` })}
        <div><button type="submit">Create coupon</button></div>
      </form>
      <h2 id="codes">Promotion codes</h2>
      ${errorFor(state, 'deactivate-code')}
      ${table('Promotion codes', ['Code', 'Coupon', 'Redemptions', 'Status', 'Valid until', ''], codeRows, 'No promotion codes yet.')}
      <nav class="pager" aria-label="Promotion code pages">
        ${offset > 0 ? html`<a href="${ctx.base}/coupons?codes_offset=${Math.max(0, offset - CODES_PER_PAGE)}">Previous codes</a>` : ''}${
          offset + CODES_PER_PAGE < codes.data.total
            ? html`<a href="${ctx.base}/coupons?codes_offset=${offset + CODES_PER_PAGE}">More codes</a>`
            : ''
        }
      </nav>
      <form class="card" method="post" aria-labelledby="create-code">
        <h3 id="create-code">Create a promotion code</h3>
        ${formFields(ctx, 'create-code')}${errorFor(state, 'create-code')}
        ${field('pc-code', 'Code (3-20 uppercase letters and digits)', { name: 'code', value: v('code'), required: true })}
        ${
          activeCoupons.length
            ? select(
                'pc-coupon',
                'Coupon',
                'coupon_id',
                activeCoupons.map((c) => [c.id, `${c.name} (${discountText(c)})`]),
                v('coupon_id'),
              )
            : html`<p class="muted">Create a coupon first.</p>`
        }
        ${field('pc-max', 'Maximum redemptions (optional)', { name: 'max_redemptions', type: 'number', value: v('max_redemptions'), extra: html` min="1"` })}
        ${field('pc-until', 'Valid until (UTC, optional)', { name: 'valid_until', type: 'datetime-local', value: v('valid_until') })}
        <div><button type="submit" ${activeCoupons.length ? '' : html` disabled`}>Create promotion code</button></div>
      </form>`;
  },
  actions: {
    'create-coupon': {
      async run(ctx, form) {
        const coupon = await ctx.api.v1<Coupon>(
          'POST',
          '/coupons',
          {
            name: text(form.name),
            discount_type: form.discount_type,
            discount_amount: num(form.discount_amount),
            duration: form.duration,
            duration_in_months: form.duration === 'repeating' ? num(form.duration_in_months) : undefined,
          },
          { idempotencyKey: form._idem },
        );
        return { notice: `Coupon ${coupon.name} created.` };
      },
    },
    'deactivate-coupon': {
      async run(ctx, form) {
        await ctx.api.v1('PATCH', `/coupons/${encodeURIComponent(form.coupon_id ?? '')}`, { active: false });
        return { notice: 'Coupon deactivated.' };
      },
    },
    'create-code': {
      async run(ctx, form) {
        const created = await ctx.api.v1<{ data: PromotionCode }>(
          'POST',
          '/promotion-codes',
          {
            coupon_id: form.coupon_id,
            code: text(form.code)?.toUpperCase(),
            max_redemptions: num(form.max_redemptions),
            valid_until: isoFrom(form.valid_until),
          },
          { idempotencyKey: form._idem },
        );
        return { notice: `Promotion code ${created.data.code} created.` };
      },
    },
    'deactivate-code': {
      async run(ctx, form) {
        await ctx.api.v1('DELETE', `/promotion-codes/${encodeURIComponent(form.code_id ?? '')}`);
        return { notice: 'Promotion code deactivated.' };
      },
    },
  },
};

interface Redemption {
  id: string;
  customer_id: string;
  order_id: string;
  discount_amount: number;
  status: string;
  redeemed_at: string;
}

export const promotionCodePage: DashboardPage = {
  path: 'promotion-codes/:id',
  section: 'coupons',
  title: () => 'Promotion code',
  async view(ctx) {
    const id = encodeURIComponent(ctx.params.id!);
    const code = (await ctx.api.v1<{ data: PromotionCode }>('GET', `/promotion-codes/${id}`)).data;
    const offset = Math.max(0, Number(ctx.query.offset) || 0);
    const redemptions = (
      await ctx.api.v1<{
        data: { redemptions: Redemption[]; total: number; active_count: number; voided_count: number };
      }>('GET', `/promotion-codes/${id}/redemptions?limit=20&offset=${offset}`)
    ).data;
    const rows = redemptions.redemptions.map(
      (r) =>
        html`<tr>
          <td>${when(r.redeemed_at)}</td>
          <td><a href="${ctx.base}/customers/${r.customer_id}">${r.customer_id}</a></td>
          <td>${r.order_id}</td>
          <td>${twd(r.discount_amount)}</td>
          <td>${r.status}</td>
        </tr>`,
    );
    return html`<section class="card" aria-label="Promotion code">
        <h2>${code.code}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${code.id}</dd>
          <dt>Coupon</dt>
          <dd>${code.coupon_id}</dd>
          <dt>Status</dt>
          <dd>${code.active ? 'Active' : 'Inactive'}</dd>
          <dt>Redemptions</dt>
          <dd>${redemptions.active_count} active, ${redemptions.voided_count} voided</dd>
        </dl>
      </section>
      <h2>Redemptions</h2>
      ${table('Redemptions', ['When', 'Customer', 'Order', 'Discount', 'Status'], rows, 'Not redeemed yet.')}
      <nav class="pager" aria-label="Pages">
        ${offset > 0 ? html`<a href="?offset=${Math.max(0, offset - 20)}">Previous page</a>` : ''}${offset + 20 < redemptions.total ? html`<a href="?offset=${offset + 20}">Next page</a>` : ''}
      </nav>
      ${await historySection(ctx, code.id)}`;
  },
};
