import { html } from '@billing/service';
import { twd, when } from '../html';
import {
  type DashboardPage,
  type PageContext,
  type PageState,
  buttonForm,
  errorFor,
  field,
  formFields,
  select,
  table,
} from '../page';
import { historySection } from './history';
import { nullableNum, nullableText, num, prefill, text } from './forms';

export interface Product {
  id: string;
  name: string;
  slug: string | null;
  description: string | null;
  type: string;
  interval: string | null;
  interval_count: number;
  price: number;
  trial_days: number | null;
  display_order: number | null;
  active: boolean;
  created_at: string;
}

export const listProducts = async (ctx: PageContext, archived = false) =>
  (await ctx.api.v1<{ data: Product[] }>('GET', archived ? '/products?status=archived' : '/products')).data;

const describePrice = (p: Product) =>
  p.interval
    ? `${twd(p.price)} every ${p.interval_count > 1 ? `${p.interval_count} ` : ''}${p.interval}${p.interval_count > 1 ? 's' : ''}`
    : twd(p.price);

function productFields(state: PageState, product?: Product): unknown {
  const v = (name: string, fallback?: string | number | null) => prefill(state.form, name, fallback);
  return html`${field('p-name', 'Name', { name: 'name', value: v('name', product?.name), required: true })}
  ${field('p-description', 'Description', { name: 'description', value: v('description', product?.description) })}
  ${field('p-price', 'Price (whole TWD)', { name: 'price', type: 'number', value: v('price', product?.price), required: true, extra: html` min="0" step="1"` })}
  ${field('p-trial', 'Trial days (subscriptions, optional)', { name: 'trial_days', type: 'number', value: v('trial_days', product?.trial_days), extra: html` min="1"` })}
  ${field('p-order', 'Display order (optional)', { name: 'display_order', type: 'number', value: v('display_order', product?.display_order) })}`;
}

export const productsPage: DashboardPage = {
  path: 'products',
  section: 'products',
  title: () => 'Products',
  async view(ctx, state) {
    const archived = ctx.query.status === 'archived';
    const products = await listProducts(ctx, archived);
    const rows = products.map(
      (p) =>
        html`<tr>
          <td><a href="${ctx.base}/products/${p.id}">${p.name}</a></td>
          <td>${p.slug ?? '—'}</td>
          <td>${p.type}</td>
          <td>${describePrice(p)}</td>
          <td>${when(p.created_at)}</td>
          <td>
            ${
              archived
                ? buttonForm(ctx, 'restore', 'Restore', { product_id: p.id }, { accessibleName: `Restore ${p.name}` })
                : buttonForm(
                    ctx,
                    'archive',
                    'Archive',
                    { product_id: p.id },
                    { accessibleName: `Archive ${p.name}`, confirm: `Archive ${p.name}?` },
                  )
            }
          </td>
        </tr>`,
    );
    const v = (name: string) => prefill(state.form, name);
    return html`<p>
        <a href="${ctx.base}/products" ${archived ? '' : html` aria-current="page"`}>Active</a> ·
        <a href="${ctx.base}/products?status=archived" ${archived ? html` aria-current="page"` : ''}>Archived</a>
      </p>
      ${errorFor(state, 'archive')}${errorFor(state, 'restore')}
      ${table(archived ? 'Archived products' : 'Active products', ['Name', 'Slug', 'Type', 'Price', 'Created', ''], rows, archived ? 'No archived products.' : 'No products yet: create one below.')}
      <h2 id="create-product">Create a product</h2>
      <form class="card" method="post" aria-labelledby="create-product">
        ${formFields(ctx, 'create')}${errorFor(state, 'create')}
        ${field('p-slug', 'Slug (lowercase letters, digits, hyphens)', { name: 'slug', value: v('slug') })}
        ${select(
          'p-type',
          'Type',
          'type',
          [
            ['SUBSCRIPTION', 'Subscription'],
            ['ONE_TIME', 'One-time'],
            ['CREDITS', 'Credits'],
            ['DONATION', 'Donation'],
          ],
          v('type'),
        )}
        ${select(
          'p-interval',
          'Billing interval (subscriptions)',
          'interval',
          [
            ['month', 'Month'],
            ['year', 'Year'],
            ['week', 'Week'],
            ['day', 'Day'],
          ],
          v('interval'),
        )}
        ${field('p-count', 'Intervals per period', { name: 'interval_count', type: 'number', value: v('interval_count') ?? '1', extra: html` min="1"` })}
        ${productFields(state)}
        <div><button type="submit">Create product</button></div>
      </form>`;
  },
  actions: {
    create: {
      async run(ctx, form) {
        const subscription = form.type === 'SUBSCRIPTION';
        const product = await ctx.api.admin<Product>('POST', '/products', {
          environment: ctx.environment,
          name: text(form.name),
          slug: text(form.slug),
          description: text(form.description),
          type: form.type,
          interval: subscription ? form.interval : null,
          interval_count: subscription ? num(form.interval_count) : 1,
          price: num(form.price),
          currency: 'TWD',
          trial_days: subscription ? num(form.trial_days) : undefined,
          display_order: num(form.display_order),
        });
        return { notice: `Product ${product.name} created.`, redirect: `${ctx.base}/products/${product.id}` };
      },
    },
    archive: {
      async run(ctx, form) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(form.product_id ?? '')}`, { active: false });
        return { notice: 'Product archived: it can no longer be bought, and existing subscriptions continue.' };
      },
    },
    restore: {
      async run(ctx, form) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(form.product_id ?? '')}`, { active: true });
        return { notice: 'Product restored.' };
      },
    },
  },
};

export const productPage: DashboardPage = {
  path: 'products/:id',
  section: 'products',
  title: () => 'Product',
  async view(ctx, state) {
    const p = await ctx.api.v1<Product>('GET', `/products/${encodeURIComponent(ctx.params.id!)}`);
    return html`<section class="card" aria-label="Product">
        <h2>${p.name} ${p.active ? '' : html`<span class="badge">Archived</span>`}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${p.id}</dd>
          <dt>Slug</dt>
          <dd>${p.slug ?? '—'}</dd>
          <dt>Type</dt>
          <dd>${p.type}</dd>
          <dt>Price</dt>
          <dd>${describePrice(p)}</dd>
          <dt>Created</dt>
          <dd>${when(p.created_at)}</dd>
        </dl>
        ${errorFor(state, 'archive')}${p.active ? buttonForm(ctx, 'archive', 'Archive', {}, { confirm: `Archive ${p.name}?` }) : buttonForm(ctx, 'restore', 'Restore')}
      </section>
      <h2 id="edit-product">Edit</h2>
      <form class="card" method="post" aria-labelledby="edit-product">
        ${formFields(ctx, 'update')}${errorFor(state, 'update')}${productFields(state, p)}
        <div><button type="submit">Save changes</button></div>
      </form>
      ${await historySection(ctx, p.id)}`;
  },
  actions: {
    update: {
      async run(ctx, form) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(ctx.params.id!)}`, {
          name: text(form.name),
          description: nullableText(form.description),
          price: num(form.price),
          trial_days: form.trial_days === undefined ? undefined : nullableNum(form.trial_days),
          display_order: nullableNum(form.display_order),
        });
        return { notice: 'Product saved.' };
      },
    },
    archive: {
      async run(ctx) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(ctx.params.id!)}`, { active: false });
        return { notice: 'Product archived.' };
      },
    },
    restore: {
      async run(ctx) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(ctx.params.id!)}`, { active: true });
        return { notice: 'Product restored.' };
      },
    },
  },
};
