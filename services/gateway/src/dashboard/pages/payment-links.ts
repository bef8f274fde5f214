import { html } from '@billing/service';
import { when } from '../html';
import { type DashboardPage, buttonForm, errorFor, field, formFields, pager, select, table } from '../page';
import { listProducts } from './products';
import { num, prefill, text } from './forms';

interface PaymentLink {
  id: string;
  url: string;
  active: boolean;
  product: { id: string; name: string };
  promotion_code: string | null;
  view_count: number;
  session_count: number;
  completed_count: number;
  created_at: string;
}

export const paymentLinksPage: DashboardPage = {
  path: 'payment-links',
  section: 'payment-links',
  title: (ctx) => ctx.t('Payment links'),
  async view(ctx, state) {
    const { t } = ctx;
    const after = ctx.query.after ? `&starting_after=${encodeURIComponent(ctx.query.after)}` : '';
    const [links, products] = await Promise.all([
      ctx.api.v1<{ data: PaymentLink[]; has_more: boolean }>('GET', `/payment-links?limit=20${after}`),
      listProducts(ctx),
    ]);
    const rows = links.data.map(
      (l) =>
        html`<tr>
          <td>${l.product.name}${l.promotion_code ? html` <span class="badge">${l.promotion_code}</span>` : ''}</td>
          <td>
            <a href="${l.url}">${l.url}</a>
            <button
              type="button"
              class="secondary"
              data-copy="${l.url}"
              aria-label="${t('Copy link for {product}', { product: l.product.name })}"
            >
              ${t('Copy')}
            </button>
          </td>
          <td>${l.view_count}</td>
          <td>${l.session_count}</td>
          <td>${l.completed_count}</td>
          <td>${l.active ? t('Active') : t('Inactive')}</td>
          <td>${when(l.created_at)}</td>
          <td>
            ${
              l.active
                ? buttonForm(
                    ctx,
                    'deactivate',
                    t('Deactivate'),
                    { link_id: l.id },
                    {
                      accessibleName: t('Deactivate link for {product}', { product: l.product.name }),
                      confirm: t('Deactivate this link? Buyers who open it will see that it ended.'),
                    },
                  )
                : ''
            }
          </td>
        </tr>`,
    );
    const v = (name: string) => prefill(state.form, name);
    return html`${errorFor(state, 'deactivate')}${table(
        t('Payment links'),
        [t('Product'), t('Link'), t('Views'), t('Checkouts'), t('Paid'), t('Status'), t('Created'), ''],
        rows,
        t('No payment links yet.'),
      )}${pager(ctx, links.has_more, links.data.at(-1)?.id)}
      <h2 id="create-link">${t('Create a payment link')}</h2>
      <form class="card" method="post" aria-labelledby="create-link">
        ${formFields(ctx, 'create')}${errorFor(state, 'create')}
        ${
          products.length
            ? select(
                'l-product',
                t('Product'),
                'product_id',
                products.map((p) => [p.id, p.name]),
                v('product_id'),
              )
            : html`<p class="muted">${t('Create a product first.')}</p>`
        }
        ${field('l-code', t('Promotion code applied by default (optional)'), { name: 'promotion_code', value: v('promotion_code') })}
        ${field('l-success', t('After payment, go to (https URL, optional)'), { name: 'success_url', type: 'url', value: v('success_url') })}
        ${field('l-max', t('Stop after this many payments (optional)'), { name: 'max_completions', type: 'number', value: v('max_completions'), extra: html` min="1"` })}
        <div>
          <button type="submit" ${products.length ? '' : html` disabled`}>${t('Create payment link')}</button>
        </div>
      </form>`;
  },
  actions: {
    create: {
      async run(ctx, form) {
        await ctx.api.v1(
          'POST',
          '/payment-links',
          {
            productId: form.product_id,
            promotionCode: text(form.promotion_code)?.toUpperCase(),
            successUrl: text(form.success_url),
            maxCompletions: num(form.max_completions),
          },
          { idempotencyKey: form._idem },
        );
        return { notice: ctx.t('Payment link created.') };
      },
    },
    deactivate: {
      async run(ctx, form) {
        await ctx.api.v1('DELETE', `/payment-links/${encodeURIComponent(form.link_id ?? '')}`);
        return { notice: ctx.t('Payment link deactivated.') };
      },
    },
  },
};
