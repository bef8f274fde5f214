import { METERED_PRICE_LIMITS } from '@billing/contracts';
import { html } from '@billing/service';
import { twd, when } from '../html';
import type { Translate } from '../i18n';
import {
  type DashboardPage,
  type PageContext,
  type PageState,
  buttonForm,
  errorFor,
  field,
  fieldError,
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
  /** What a purchase grants (CREDITS products); null: nothing. */
  credits: { amount: number; expires_after_days: number | null; rollover?: boolean } | null;
  /** A plan's prices for usage, billed on its renewal invoices. */
  metered_prices?: Array<{ meter: string; unit_amount: number; package_size: number }> | null;
  active: boolean;
  created_at: string;
}

export const listProducts = async (ctx: PageContext, archived = false) =>
  (await ctx.api.v1<{ data: Product[] }>('GET', archived ? '/products?status=archived' : '/products')).data;

/** A price and how often it is charged, by interval: one interval, or several. */
const EVERY: Record<string, [string, string]> = {
  month: ['{price} every month', '{price} every {count} months'],
  year: ['{price} every year', '{price} every {count} years'],
  week: ['{price} every week', '{price} every {count} weeks'],
  day: ['{price} every day', '{price} every {count} days'],
};

const describePrice = (t: Translate, p: Product) => {
  if (!p.interval) return twd(p.price);
  const every = EVERY[p.interval];
  const several = p.interval_count > 1;
  // An interval the dashboard has no words for (the API knows these four) is shown as it comes.
  if (!every) return `${twd(p.price)} every ${several ? `${p.interval_count} ` : ''}${p.interval}${several ? 's' : ''}`;
  return t(every[several ? 1 : 0], { price: twd(p.price), count: p.interval_count });
};

function productFields(t: Translate, state: PageState, product?: Product): unknown {
  const v = (name: string, fallback?: string | number | null) => prefill(state.form, name, fallback);
  return html`${field('p-name', t('Name'), { name: 'name', value: v('name', product?.name), required: true })}
  ${field('p-description', t('Description'), { name: 'description', value: v('description', product?.description) })}
  ${field('p-price', t('Price (whole TWD)'), { name: 'price', type: 'number', value: v('price', product?.price), required: true, extra: html` min="0" step="1"` })}
  ${field('p-trial', t('Trial days (subscriptions, optional)'), { name: 'trial_days', type: 'number', value: v('trial_days', product?.trial_days), extra: html` min="1"` })}
  ${field('p-order', t('Display order (optional)'), { name: 'display_order', type: 'number', value: v('display_order', product?.display_order) })}
  ${creditFields(t, state, product)}
  ${!product || product.type === 'SUBSCRIPTION' ? meteredPriceFields(t, state, product) : ''}`;
}

/**
 * What a purchase grants (CREDITS) or each paid period (a plan's allowance, with its rollover);
 * the new-product form, whose type is not chosen yet, asks for either.
 */
function creditFields(t: Translate, state: PageState, product?: Product) {
  const v = (name: string, fallback?: string | number | null) => prefill(state.form, name, fallback);
  const plan = product?.type === 'SUBSCRIPTION';
  const amountLabel = !product
    ? t('Credits a purchase or each paid period grants (credits products and plans, optional)')
    : plan
      ? t('Credits each paid period grants (optional)')
      : t('Credits a purchase grants (credits products, optional)');
  // After a refused save of this form the box shows what was sent; otherwise the plan's rollover.
  const sent = state.form && 'credit_amount' in state.form ? state.form : undefined;
  const rollover = sent ? sent.credit_rollover === 'on' : (product?.credits?.rollover ?? false);
  const rolloverLabel = plan
    ? t('Unused credits carry over to the next period (rollover)')
    : t('Plans: unused credits carry over to the next period (rollover)');
  return html`${field('p-credits', amountLabel, { name: 'credit_amount', type: 'number', value: v('credit_amount', product?.credits?.amount), extra: html` min="1" step="1"` })}
  ${field('p-credits-days', t('Days until those credits expire (optional)'), { name: 'credit_expires_after_days', type: 'number', value: v('credit_expires_after_days', product?.credits?.expires_after_days), extra: html` min="1" step="1"` })}
  ${
    !product || plan
      ? html`<div class="check">
          <input type="checkbox" id="p-credits-rollover" name="credit_rollover" ${rollover ? html` checked` : ''} />
          <label for="p-credits-rollover">${rolloverLabel}</label>
        </div>`
      : ''
  }`;
}

/**
 * The form's credits: none without an amount (what the API then says of a bad one is shown).
 * A plan's allowance carries its rollover box; a CREDITS product has none to send.
 */
const creditsOf = (form: Record<string, string | undefined>, plan: boolean) => {
  const amount = num(form.credit_amount);
  if (amount === undefined) return null;
  const rollover = plan ? { rollover: form.credit_rollover === 'on' } : {};
  return { amount, expires_after_days: nullableNum(form.credit_expires_after_days), ...rollover };
};

/** Rows of the form's metered prices: as many as a plan may hold. */
const METERED_ROWS = METERED_PRICE_LIMITS.prices;
const meteredNames = (row: number) => ({
  meter: `metered_meter_${row}`,
  unitAmount: `metered_unit_amount_${row}`,
  packageSize: `metered_package_size_${row}`,
});

/** The form's metered-price rows with anything in them, in order, each with its row's number. */
const meteredRowsOf = (form: Record<string, string | undefined>) =>
  Array.from({ length: METERED_ROWS }, (_, row) => {
    const names = meteredNames(row);
    return { row, meter: form[names.meter], unitAmount: form[names.unitAmount], packageSize: form[names.packageSize] };
  }).filter((r) => [r.meter, r.unitAmount, r.packageSize].some((value) => text(value) !== undefined));

/**
 * The form's metered prices: its rows with anything in them (an empty package size: the API's 1);
 * null when every row is empty; undefined when the form has no rows, which keeps them. What the
 * API says of a bad value is shown at its row.
 */
const meteredPricesOf = (form: Record<string, string | undefined>) => {
  if (!Array.from({ length: METERED_ROWS }, (_, row) => meteredNames(row).meter).some((name) => name in form)) {
    return undefined;
  }
  const prices = meteredRowsOf(form).map((r) => ({
    meter: r.meter?.trim() ?? '',
    unit_amount: num(r.unitAmount),
    package_size: num(r.packageSize),
  }));
  return prices.length ? prices : null;
};

/**
 * A plan's metered prices, one row each (meter key, unit amount, package size), prefilled with
 * the plan's; the new-product form, whose type is not chosen yet, offers them for plans. After a
 * refused save the rows show what was sent, and the API's problems at their row's field.
 */
function meteredPriceFields(t: Translate, state: PageState, product?: Product) {
  const action = product ? 'update' : 'create';
  const v = (name: string, fallback?: string | number | null) => prefill(state.form, name, fallback);
  const sent = state.form?._action === action ? state.form : undefined;
  // The API numbers the prices it was sent, which leave out the empty rows.
  const rowOfPrice = sent ? meteredRowsOf(sent).map((r) => r.row) : [];
  const problem = (row: number, key: string) => {
    const index = rowOfPrice.indexOf(row);
    return index < 0 ? undefined : fieldError(state, action, `metered_prices.${index}.${key}`);
  };
  const whole = fieldError(state, action, 'metered_prices');
  const legend = product ? t('Metered prices (optional)') : t('Plans: metered prices (optional)');
  const describedBy = ['p-metered-hint', whole ? 'p-metered-error' : ''].filter(Boolean).join(' ');
  const rows = Array.from({ length: METERED_ROWS }, (_, row) => {
    const names = meteredNames(row);
    const price = product?.metered_prices?.[row];
    return html`<fieldset>
      <legend>${t('Metered price {n}', { n: row + 1 })}</legend>
      ${field(`p-meter-${row}`, t('Meter key'), { name: names.meter, value: v(names.meter, price?.meter), extra: html` autocomplete="off" autocapitalize="none" spellcheck="false"`, error: problem(row, 'meter') })}
      ${field(`p-meter-amount-${row}`, t('Unit amount (whole NT$)'), { name: names.unitAmount, type: 'number', value: v(names.unitAmount, price?.unit_amount), extra: html` min="0" step="1"`, error: problem(row, 'unit_amount') })}
      ${field(`p-meter-size-${row}`, t('Package size (units; empty: 1)'), { name: names.packageSize, type: 'number', value: v(names.packageSize, price?.package_size), extra: html` min="1" step="1"`, error: problem(row, 'package_size') })}
    </fieldset>`;
  });
  return html`<fieldset aria-describedby="${describedBy}">
    <legend>${legend}</legend>
    <div class="muted" id="p-metered-hint">
      ${t(
        'Each renewal invoice bills the usage of the period that ended: the unit amount for every package of units, rounded up to whole packages. Up to {count} meters, each once; empty rows are left out.',
        { count: METERED_ROWS },
      )}
    </div>
    ${whole ? html`<div class="field-error" id="p-metered-error">${whole}</div>` : ''}${rows}
  </fieldset>`;
}

/** `api_calls: NT$1 per 100 units`, one line a meter; a dash for a plan without. */
const describeMeteredPrices = (t: Translate, prices: Product['metered_prices']) => {
  if (!prices?.length) return '—';
  return html`${prices.map((price, i) => {
    const unitAmount = twd(price.unit_amount);
    const text =
      price.package_size === 1
        ? t('{meter}: {amount} per unit', { meter: price.meter, amount: unitAmount })
        : t('{meter}: {amount} per {size} units, rounded up', {
            meter: price.meter,
            amount: unitAmount,
            size: price.package_size.toLocaleString('en-US'),
          });
    return html`${i > 0 ? html`<br />` : ''}${text}`;
  })}`;
};

/** `500 credits, for 30 days`: what a purchase grants; a plan's allowance says whether it carries over. */
const describeCredits = (t: Translate, credits: Product['credits'], plan = false) => {
  if (!credits) return '—';
  const amount = credits.amount.toLocaleString('en-US');
  if (plan) {
    const each = credits.rollover
      ? t('{amount} credits each paid period; unused credits carry over', { amount })
      : t('{amount} credits each paid period; unused credits expire at its end', { amount });
    return credits.expires_after_days === null
      ? each
      : t('{allowance}, each grant for at most {days} days', { allowance: each, days: credits.expires_after_days });
  }
  return credits.expires_after_days === null
    ? t('{amount} credits, without expiry', { amount })
    : t('{amount} credits, for {days} days', { amount, days: credits.expires_after_days });
};

export const productsPage: DashboardPage = {
  path: 'products',
  section: 'products',
  title: (ctx) => ctx.t('Products'),
  async view(ctx, state) {
    const { t } = ctx;
    const archived = ctx.query.status === 'archived';
    const products = await listProducts(ctx, archived);
    const rows = products.map(
      (p) =>
        html`<tr>
          <td><a href="${ctx.base}/products/${p.id}">${p.name}</a></td>
          <td>${p.slug ?? '—'}</td>
          <td>${p.type}</td>
          <td>${describePrice(t, p)}</td>
          <td>${when(p.created_at)}</td>
          <td>
            ${
              archived
                ? buttonForm(
                    ctx,
                    'restore',
                    t('Restore'),
                    { product_id: p.id },
                    { accessibleName: t('Restore {name}', { name: p.name }) },
                  )
                : buttonForm(
                    ctx,
                    'archive',
                    t('Archive'),
                    { product_id: p.id },
                    {
                      accessibleName: t('Archive {name}', { name: p.name }),
                      confirm: t('Archive {name}?', { name: p.name }),
                    },
                  )
            }
          </td>
        </tr>`,
    );
    const v = (name: string) => prefill(state.form, name);
    return html`<p>
        <a href="${ctx.base}/products" ${archived ? '' : html` aria-current="page"`}>${t('Active')}</a> ·
        <a href="${ctx.base}/products?status=archived" ${archived ? html` aria-current="page"` : ''}
          >${t('Archived')}</a
        >
      </p>
      ${errorFor(state, 'archive')}${errorFor(state, 'restore')}
      ${table(
        archived ? t('Archived products') : t('Active products'),
        [t('Name'), t('Slug'), t('Type'), t('Price'), t('Created'), ''],
        rows,
        archived ? t('No archived products.') : t('No products yet: create one below.'),
      )}
      <h2 id="create-product">${t('Create a product')}</h2>
      <form class="card" method="post" aria-labelledby="create-product">
        ${formFields(ctx, 'create')}${errorFor(state, 'create')}
        ${field('p-slug', t('Slug (lowercase letters, digits, hyphens)'), { name: 'slug', value: v('slug') })}
        ${select(
          'p-type',
          t('Type'),
          'type',
          [
            ['SUBSCRIPTION', t('Subscription')],
            ['ONE_TIME', t('One-time')],
            ['CREDITS', t('Credits')],
            ['DONATION', t('Donation')],
          ],
          v('type'),
        )}
        ${select(
          'p-interval',
          t('Billing interval (subscriptions)'),
          'interval',
          [
            ['month', t('Month')],
            ['year', t('Year')],
            ['week', t('Week')],
            ['day', t('Day')],
          ],
          v('interval'),
        )}
        ${field('p-count', t('Intervals per period'), { name: 'interval_count', type: 'number', value: v('interval_count') ?? '1', extra: html` min="1"` })}
        ${productFields(t, state)}
        <div><button type="submit">${t('Create product')}</button></div>
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
          credits: form.type === 'CREDITS' || subscription ? creditsOf(form, subscription) : null,
          // Rows filled for another type are sent, for the API to refuse them: never dropped unsaid.
          metered_prices: subscription ? meteredPricesOf(form) : (meteredPricesOf(form) ?? undefined),
        });
        return {
          notice: ctx.t('Product {name} created.', { name: product.name }),
          redirect: `${ctx.base}/products/${product.id}`,
        };
      },
    },
    archive: {
      async run(ctx, form) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(form.product_id ?? '')}`, { active: false });
        return {
          notice: ctx.t('Product archived: it can no longer be bought, and existing subscriptions continue.'),
        };
      },
    },
    restore: {
      async run(ctx, form) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(form.product_id ?? '')}`, { active: true });
        return { notice: ctx.t('Product restored.') };
      },
    },
  },
};

export const productPage: DashboardPage = {
  path: 'products/:id',
  section: 'products',
  title: (ctx) => ctx.t('Product'),
  async view(ctx, state) {
    const { t } = ctx;
    const p = await ctx.api.v1<Product>('GET', `/products/${encodeURIComponent(ctx.params.id!)}`);
    return html`<section class="card" aria-label="${t('Product')}">
        <h2>${p.name} ${p.active ? '' : html`<span class="badge">${t('Archived')}</span>`}</h2>
        <dl class="facts">
          <dt>ID</dt>
          <dd>${p.id}</dd>
          <dt>${t('Slug')}</dt>
          <dd>${p.slug ?? '—'}</dd>
          <dt>${t('Type')}</dt>
          <dd>${p.type}</dd>
          <dt>${t('Price')}</dt>
          <dd>${describePrice(t, p)}</dd>
          ${
            p.type === 'CREDITS'
              ? html`<dt>${t('Credits a purchase grants')}</dt>
                  <dd>${describeCredits(t, p.credits)}</dd>`
              : p.type === 'SUBSCRIPTION'
                ? html`<dt>${t('Credits each paid period grants')}</dt>
                    <dd>${describeCredits(t, p.credits, true)}</dd>
                    <dt>${t('Usage billed on each renewal invoice')}</dt>
                    <dd>${describeMeteredPrices(t, p.metered_prices)}</dd>`
                : ''
          }
          <dt>${t('Created')}</dt>
          <dd>${when(p.created_at)}</dd>
        </dl>
        ${errorFor(state, 'archive')}${
          p.active
            ? buttonForm(ctx, 'archive', t('Archive'), {}, { confirm: t('Archive {name}?', { name: p.name }) })
            : buttonForm(ctx, 'restore', t('Restore'))
        }
      </section>
      <h2 id="edit-product">${t('Edit')}</h2>
      <form class="card" method="post" aria-labelledby="edit-product">
        ${formFields(ctx, 'update')}${errorFor(state, 'update')}${productFields(t, state, p)}
        <div><button type="submit">${t('Save changes')}</button></div>
      </form>
      ${await historySection(ctx, p.id)}`;
  },
  actions: {
    update: {
      async run(ctx, form) {
        const product = await ctx.api.v1<Product>('GET', `/products/${encodeURIComponent(ctx.params.id!)}`);
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(ctx.params.id!)}`, {
          name: text(form.name),
          description: nullableText(form.description),
          price: num(form.price),
          trial_days: form.trial_days === undefined ? undefined : nullableNum(form.trial_days),
          display_order: nullableNum(form.display_order),
          credits: creditsOf(form, product.type === 'SUBSCRIPTION'),
          metered_prices: product.type === 'SUBSCRIPTION' ? meteredPricesOf(form) : undefined,
        });
        return { notice: ctx.t('Product saved.') };
      },
    },
    archive: {
      async run(ctx) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(ctx.params.id!)}`, { active: false });
        return { notice: ctx.t('Product archived.') };
      },
    },
    restore: {
      async run(ctx) {
        await ctx.api.admin('PATCH', `/products/${encodeURIComponent(ctx.params.id!)}`, { active: true });
        return { notice: ctx.t('Product restored.') };
      },
    },
  },
};
