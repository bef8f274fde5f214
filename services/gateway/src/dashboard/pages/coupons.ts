import { html } from '@billing/service';
import { twd, when } from '../html';
import type { Translate } from '../i18n';
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
const discountText = (t: Translate, c: Coupon) =>
  c.discount_type === 'PERCENTAGE'
    ? t('{amount}% off', { amount: c.discount_amount })
    : c.discount_type === 'FIXED_AMOUNT'
      ? t('{amount} off', { amount: twd(c.discount_amount) })
      : t('first period at {amount}', { amount: twd(c.discount_amount) });
/** `once` and `forever` in the user's words; several months counted. */
const durationText = (t: Translate, c: Coupon) =>
  c.duration === 'repeating' ? t('{months} months', { months: String(c.duration_in_months) }) : t(c.duration);

export const couponsPage: DashboardPage = {
  path: 'coupons',
  section: 'coupons',
  title: (ctx) => ctx.t('Coupons and promotion codes'),
  async view(ctx, state) {
    const { t } = ctx;
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
          <td>${discountText(t, c)}</td>
          <td>${durationText(t, c)}</td>
          <td>${c.active ? t('Active') : t('Inactive')}</td>
          <td>${when(c.created_at)}</td>
          <td>
            ${
              c.active
                ? buttonForm(
                    ctx,
                    'deactivate-coupon',
                    t('Deactivate'),
                    { coupon_id: c.id },
                    {
                      accessibleName: t('Deactivate coupon {name}', { name: c.name }),
                      confirm: t('Deactivate {name}?', { name: c.name }),
                    },
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
          <td>${p.active ? t('Active') : t('Inactive')}</td>
          <td>${when(p.valid_until)}</td>
          <td>
            ${
              p.active
                ? buttonForm(
                    ctx,
                    'deactivate-code',
                    t('Deactivate'),
                    { code_id: p.id },
                    {
                      accessibleName: t('Deactivate code {code}', { code: p.code }),
                      confirm: t('Deactivate {name}?', { name: p.code }),
                    },
                  )
                : ''
            }
          </td>
        </tr>`,
    );
    const v = (name: string) => prefill(state.form, name);
    const activeCoupons = coupons.data.filter((c) => c.active);
    return html`<h2 id="coupons">${t('Coupons')}</h2>
      ${errorFor(state, 'deactivate-coupon')}
      ${table(
        t('Coupons'),
        [t('Name'), t('Discount'), t('Duration'), t('Status'), t('Created'), ''],
        couponRows,
        t('No coupons yet.'),
      )}${pager(ctx, coupons.has_more, coupons.data.at(-1)?.id)}
      <form class="card" method="post" aria-labelledby="create-coupon">
        <h3 id="create-coupon">${t('Create a coupon')}</h3>
        ${formFields(ctx, 'create-coupon')}${errorFor(state, 'create-coupon')}
        ${field('c-name', t('Name'), { name: 'name', value: v('name'), required: true })}
        ${select(
          'c-type',
          t('Discount type'),
          'discount_type',
          [
            ['PERCENTAGE', t('Percentage')],
            ['FIXED_AMOUNT', t('Fixed amount (TWD)')],
            ['FIRST_PERIOD_PRICE', t('First period price (TWD)')],
          ],
          v('discount_type'),
        )}
        ${field('c-amount', t('Amount (percent or whole TWD)'), { name: 'discount_amount', type: 'number', value: v('discount_amount'), required: true, extra: html` min="0"` })}
        ${select(
          'c-duration',
          t('Duration'),
          'duration',
          [
            ['once', t('Once')],
            ['repeating', t('Several months')],
            ['forever', t('Forever')],
          ],
          v('duration'),
        )}
        ${field('c-months', t('Months (when several months)'), { name: 'duration_in_months', type: 'number', value: v('duration_in_months'), extra: html` min="1"` })}
        <div><button type="submit">${t('Create coupon')}</button></div>
      </form>
      <h2 id="codes">${t('Promotion codes')}</h2>
      ${errorFor(state, 'deactivate-code')}
      ${table(
        t('Promotion codes'),
        [t('Code'), t('Coupon'), t('Redemptions'), t('Status'), t('Valid until'), ''],
        codeRows,
        t('No promotion codes yet.'),
      )}
      <nav class="pager" aria-label="${t('Promotion code pages')}">
        ${offset > 0 ? html`<a href="${ctx.base}/coupons?codes_offset=${Math.max(0, offset - CODES_PER_PAGE)}">${t('Previous codes')}</a>` : ''}${
          offset + CODES_PER_PAGE < codes.data.total
            ? html`<a href="${ctx.base}/coupons?codes_offset=${offset + CODES_PER_PAGE}">${t('More codes')}</a>`
            : ''
        }
      </nav>
      <form class="card" method="post" aria-labelledby="create-code">
        <h3 id="create-code">${t('Create a promotion code')}</h3>
        ${formFields(ctx, 'create-code')}${errorFor(state, 'create-code')}
        ${field('pc-code', t('Code (3-20 uppercase letters and digits)'), { name: 'code', value: v('code'), required: true })}
        ${
          activeCoupons.length
            ? select(
                'pc-coupon',
                t('Coupon'),
                'coupon_id',
                activeCoupons.map((c) => [
                  c.id,
                  t('{name} ({discount})', { name: c.name, discount: discountText(t, c) }),
                ]),
                v('coupon_id'),
              )
            : html`<p class="muted">${t('Create a coupon first.')}</p>`
        }
        ${field('pc-max', t('Maximum redemptions (optional)'), { name: 'max_redemptions', type: 'number', value: v('max_redemptions'), extra: html` min="1"` })}
        ${field('pc-until', t('Valid until (UTC, optional)'), { name: 'valid_until', type: 'datetime-local', value: v('valid_until') })}
        <div>
          <button type="submit" ${activeCoupons.length ? '' : html` disabled`}>${t('Create promotion code')}</button>
        </div>
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
        return { notice: ctx.t('Coupon {name} created.', { name: coupon.name }) };
      },
    },
    'deactivate-coupon': {
      async run(ctx, form) {
        await ctx.api.v1('PATCH', `/coupons/${encodeURIComponent(form.coupon_id ?? '')}`, { active: false });
        return { notice: ctx.t('Coupon deactivated.') };
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
        return { notice: ctx.t('Promotion code {code} created.', { code: created.data.code }) };
      },
    },
    'deactivate-code': {
      async run(ctx, form) {
        await ctx.api.v1('DELETE', `/promotion-codes/${encodeURIComponent(form.code_id ?? '')}`);
        return { notice: ctx.t('Promotion code deactivated.') };
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
  title: (ctx) => ctx.t('Promotion code'),
  async view(ctx) {
    const { t } = ctx;
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
    return html`<section class="card" aria-label="${t('Promotion code')}">
        <h2>${code.code}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${code.id}</dd>
          <dt>${t('Coupon')}</dt>
          <dd>${code.coupon_id}</dd>
          <dt>${t('Status')}</dt>
          <dd>${code.active ? t('Active') : t('Inactive')}</dd>
          <dt>${t('Redemptions')}</dt>
          <dd>
            ${t('{active} active, {voided} voided', {
              active: redemptions.active_count,
              voided: redemptions.voided_count,
            })}
          </dd>
        </dl>
      </section>
      <h2>${t('Redemptions')}</h2>
      ${table(
        t('Redemptions'),
        [t('When'), t('Customer'), t('Order'), t('Discount'), t('Status')],
        rows,
        t('Not redeemed yet.'),
      )}
      <nav class="pager" aria-label="${t('Pages')}">
        ${offset > 0 ? html`<a href="?offset=${Math.max(0, offset - 20)}">${t('Previous page')}</a>` : ''}${offset + 20 < redemptions.total ? html`<a href="?offset=${offset + 20}">${t('Next page')}</a>` : ''}
      </nav>
      ${await historySection(ctx, code.id)}`;
  },
};
