import { type Html, html } from '@billing/service';
import { when } from '../html';
import { markup } from '../i18n';
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
} from '../page';
import { TAX_TYPE_TEXT } from './einvoices';
import { listProducts } from './products';
import { nullableText, prefill, text } from './forms';

interface Organization {
  name: string;
  logo_url: string | null;
  brand_color: string | null;
  website_url: string | null;
  allowed_origins: string[];
  api_keys: Array<{
    id: string;
    environment: string;
    type: string;
    last4: string;
    created_at: string;
    revoked_at: string | null;
  }>;
}
interface BillingSettings {
  dunning: { retry_days: number[]; after_final_failure: string };
  proration: { upgrade: string; downgrade: string };
  credits_low_balance_threshold: number | null;
  credits_overdraft_limit: number;
  updated_at: string | null;
}
interface PaymentProcessor {
  processor: 'none' | 'sandbox' | 'ecpay' | 'payuni';
  merchant_id: string | null;
  endpoint_url: string | null;
  methods: string[];
  credentials_set: boolean;
  updated_at: string | null;
}
interface EinvoiceSettings {
  provider: 'none' | 'ecpay' | 'amego';
  enabled: boolean;
  merchant_id: string | null;
  seller_tax_id: string | null;
  tax_type: 'TAXED' | 'ZERO_RATED' | 'EXEMPT';
  donation_offered: boolean;
  endpoint_url: string | null;
  credentials_set: boolean;
  updated_at: string | null;
}
interface PortalConfiguration {
  id: string;
  is_default: boolean;
  default_return_url: string | null;
  business_profile: { name: string | null };
  features: {
    invoice_history: { enabled: boolean };
    payment_method_update: { enabled: boolean };
    cancel: { enabled: boolean; mode: string };
    subscription_update: { enabled: boolean; products: string[] };
  };
}

export const readOrganization = (ctx: PageContext) => ctx.api.admin<Organization>('GET', '');

const checkbox = (id: string, name: string, label: string, on: boolean) =>
  html`<div class="check">
    <input type="checkbox" id="${id}" name="${name}" ${on ? html` checked` : ''} /> <label for="${id}">${label}</label>
  </div>`;

export const settingsPage: DashboardPage = {
  path: 'settings',
  section: 'settings',
  title: (ctx) => ctx.t('Settings'),
  async view(ctx, state) {
    const { t } = ctx;
    const env = ctx.envSlug;
    const [org, billing, processor, einvoices, portals, products] = await Promise.all([
      readOrganization(ctx),
      ctx.api.admin<BillingSettings>('GET', `/billing_settings?environment=${env}`),
      ctx.api.admin<PaymentProcessor>('GET', `/payment_processor?environment=${env}`),
      ctx.api.admin<EinvoiceSettings>('GET', `/einvoice_settings?environment=${env}`),
      ctx.api.admin<{ data: PortalConfiguration[] }>('GET', `/portal_configurations?environment=${ctx.environment}`),
      listProducts(ctx),
    ]);
    const portal = portals.data.find((p) => p.is_default) ?? portals.data[0];
    const f = portal?.features;
    const subscriptionProducts = products.filter((p) => p.type === 'SUBSCRIPTION');
    return html`<p><a href="${ctx.base}/settings/connected-apps">${t('Connected apps')}</a></p>
      <h2 id="branding">${t('Branding')}</h2>
      <form class="card" method="post" aria-labelledby="branding">
        ${formFields(ctx, 'branding')}${errorFor(state, 'branding')}
        <p class="muted">${t('Shown on the hosted checkout and portal pages of both environments.')}</p>
        <fieldset class="bare" ${readOnly(ctx)}>
          ${field('b-name', t('Business name'), { name: 'name', value: org.name, required: true })}
          ${field('b-logo', t('Logo URL (optional)'), { name: 'logo_url', type: 'url', value: org.logo_url })}
          ${field('b-color', t('Brand colour (#rrggbb, optional)'), { name: 'brand_color', value: org.brand_color })}
          ${field('b-site', t('Website URL (optional)'), { name: 'website_url', type: 'url', value: org.website_url })}
          <label for="b-origins"
            >${t('Origins allowed to use the Publishable Key (one a line; empty allows any)')}</label
          ><textarea id="b-origins" name="allowed_origins" rows="3">${org.allowed_origins.join('\n')}</textarea>
        </fieldset>
        ${saveOrRefusal(ctx, t('Save branding'), t('Only an owner can change the branding.'))}
      </form>
      ${paymentsSection(ctx, state, processor)} ${einvoicesSection(ctx, state, einvoices)}
      ${billingSection(ctx, state, billing)} ${creditsSection(ctx, state, billing)}
      <h2 id="portal">${t('Customer portal')}</h2>
      <form class="card" method="post" aria-labelledby="portal">
        ${formFields(ctx, 'portal')}${errorFor(state, 'portal')}
        ${
          portal
            ? html`<input type="hidden" name="configuration_id" value="${portal.id}" />`
            : html`<p class="muted">${t('No configuration yet: the built-in features apply until you save one.')}</p>`
        }
        <fieldset class="bare" ${readOnly(ctx)}>
          ${field('pc-return', t('Default return URL'), { name: 'default_return_url', type: 'url', value: portal?.default_return_url })}
          ${field('pc-name', t('Business name shown'), { name: 'business_name', value: portal?.business_profile.name })}
          ${checkbox('pc-invoices', 'invoice_history', t('Customers see their invoices'), f?.invoice_history.enabled ?? true)}
          ${checkbox('pc-card', 'payment_method_update', t('Customers update their card'), f?.payment_method_update.enabled ?? true)}
          ${checkbox('pc-cancel', 'cancel', t('Customers cancel'), f?.cancel.enabled ?? true)}
          ${select(
            'pc-cancel-mode',
            t('Cancellation takes effect'),
            'cancel_mode',
            [
              ['at_period_end', t('At the end of the paid period')],
              ['immediately', t('Immediately')],
            ],
            f?.cancel.mode,
          )}
          ${checkbox('pc-switch', 'subscription_update', t('Customers switch plans'), f?.subscription_update.enabled ?? false)}
          <fieldset>
            <legend>${t('Plans customers may switch to')}</legend>
            ${subscriptionProducts.length ? subscriptionProducts.map((p, i) => checkbox(`pc-prod-${i}`, `product:${p.id}`, p.name, f?.subscription_update.products.includes(p.id) ?? false)) : html`<p class="muted">${t('No subscription products.')}</p>`}
          </fieldset>
        </fieldset>
        ${saveOrRefusal(ctx, t('Save portal'), t('Only an owner can change the customer portal.'))}
      </form>`;
  },
  actions: {
    payments: {
      ownerOnly: true,
      async run(ctx, form) {
        if (form.processor === 'sandbox') {
          await ctx.api.admin('PUT', `/payment_processor?environment=${ctx.envSlug}`, { processor: 'sandbox' });
          return { notice: ctx.t('Payments go to the sandbox simulator.') };
        }
        const processor = form.processor === 'payuni' ? 'payuni' : 'ecpay';
        // The methods ticked; PAYUNi always takes cards (its ATM and store codes are for one-time checkouts).
        const ticked = METHODS.map(([method]) => method).filter((method) => form[`method_${method}`] === 'on');
        const methods = processor === 'payuni' && !ticked.includes('card') ? ['card', ...ticked] : ticked;
        await ctx.api.admin('PUT', `/payment_processor?environment=${ctx.envSlug}`, {
          processor,
          merchant_id: text(form.merchant_id),
          hash_key: text(form.hash_key),
          hash_iv: text(form.hash_iv),
          methods,
          ...(ctx.environment === 'SANDBOX' && form.endpoint_url ? { endpoint_url: text(form.endpoint_url) } : {}),
        });
        const name = processor === 'payuni' ? 'PAYUNi' : 'ECPay';
        return {
          notice: ctx.t('{processor} settings saved. The keys are stored sealed and are not shown again.', {
            processor: name,
          }),
        };
      },
    },
    removePayments: {
      ownerOnly: true,
      async run(ctx) {
        await ctx.api.admin('DELETE', `/payment_processor?environment=${ctx.envSlug}`);
        return { notice: ctx.t('Payment processor removed.') };
      },
    },
    einvoices: {
      ownerOnly: true,
      async run(ctx, form) {
        const path = `/einvoice_settings?environment=${ctx.envSlug}`;
        if (form.provider === 'none') {
          await ctx.api.admin('PUT', path, { provider: 'none' });
          return { notice: ctx.t('E-invoices turned off: no e-invoice is issued for later payments.') };
        }
        // Only the chosen provider's fields are sent (the API takes the settings whole); another provider is refused by the API.
        const common = {
          seller_tax_id: text(form.seller_tax_id),
          tax_type: form.tax_type,
          donation_offered: form.donation_offered === 'on',
          ...(ctx.environment === 'SANDBOX' && form.endpoint_url ? { endpoint_url: text(form.endpoint_url) } : {}),
        };
        const credentials =
          form.provider === 'ecpay'
            ? { merchant_id: text(form.merchant_id), hash_key: text(form.hash_key), hash_iv: text(form.hash_iv) }
            : form.provider === 'amego'
              ? { app_key: text(form.app_key) }
              : {};
        await ctx.api.admin('PUT', path, { provider: form.provider, ...credentials, ...common });
        const name = form.provider === 'ecpay' ? 'ECPay' : 'Amego';
        return {
          notice: ctx.t('{provider} e-invoice settings saved. The keys are stored sealed and are not shown again.', {
            provider: name,
          }),
        };
      },
    },
    branding: {
      ownerOnly: true,
      async run(ctx, form) {
        await ctx.api.admin('PATCH', '', {
          name: text(form.name),
          logo_url: nullableText(form.logo_url),
          brand_color: nullableText(form.brand_color),
          website_url: nullableText(form.website_url),
          allowed_origins: (form.allowed_origins ?? '').split(/\s+/).filter(Boolean),
        });
        return { notice: ctx.t('Branding saved.') };
      },
    },
    billing: {
      ownerOnly: true,
      async run(ctx, form) {
        const days = (form.retry_days ?? '')
          .split(/[\s,]+/)
          .filter(Boolean)
          .map((d) => (/^\d+$/.test(d) ? Number(d) : d));
        await ctx.api.admin('PATCH', `/billing_settings?environment=${ctx.envSlug}`, {
          dunning: { retry_days: days, after_final_failure: form.after_final_failure },
          proration: { upgrade: form.upgrade, downgrade: form.downgrade },
        });
        return { notice: ctx.t('Billing settings saved.') };
      },
    },
    credits: {
      ownerOnly: true,
      async run(ctx, form) {
        // Integers go as numbers (a negative one too); anything else as typed, for the API to refuse at its field.
        const wholeOr = (value: string | undefined, empty: number | null) => {
          const typed = (value ?? '').trim();
          if (typed === '') return empty;
          return /^-?\d+$/.test(typed) ? Number(typed) : typed;
        };
        await ctx.api.admin('PATCH', `/billing_settings?environment=${ctx.envSlug}`, {
          credits_low_balance_threshold: wholeOr(form.low_balance_threshold, null),
          credits_overdraft_limit: wholeOr(form.overdraft_limit, 0),
        });
        return { notice: ctx.t('Credits settings saved.') };
      },
    },
    portal: {
      ownerOnly: true,
      async run(ctx, form) {
        const body = {
          default_return_url: nullableText(form.default_return_url),
          business_profile: { name: nullableText(form.business_name) },
          features: {
            invoice_history: { enabled: form.invoice_history === 'on' },
            payment_method_update: { enabled: form.payment_method_update === 'on' },
            cancel: { enabled: form.cancel === 'on', mode: form.cancel_mode },
            subscription_update: {
              enabled: form.subscription_update === 'on',
              products: Object.keys(form)
                .filter((k) => k.startsWith('product:'))
                .map((k) => k.slice(8)),
            },
          },
        };
        if (form.configuration_id) {
          await ctx.api.admin('PATCH', `/portal_configurations/${encodeURIComponent(form.configuration_id)}`, body);
        } else {
          await ctx.api.admin('POST', '/portal_configurations', { environment: ctx.environment, ...body });
        }
        return { notice: ctx.t('Portal configuration saved.') };
      },
    },
  },
};

export const apiKeysPage: DashboardPage = {
  path: 'api-keys',
  section: 'api-keys',
  title: (ctx) => ctx.t('API keys'),
  async view(ctx, state) {
    const { t } = ctx;
    const org = await readOrganization(ctx);
    const keys = org.api_keys.filter((k) => k.environment === ctx.environment && !k.revoked_at);
    const owner = ctx.role !== 'member';
    const keyRow = (type: 'secret' | 'publishable') => {
      const key = keys.find((k) => k.type === type);
      const prefix = `${type === 'secret' ? 'sk' : 'pk'}_${ctx.environment === 'SANDBOX' ? 'test' : 'live'}_`;
      return html`<section class="card" aria-labelledby="key-${type}">
        <h2 id="key-${type}">${type === 'secret' ? t('Secret key') : t('Publishable key')}</h2>
        <p>
          <code>${prefix}…${key?.last4 ?? '????'}</code>
          <span class="muted">${markup(t, 'created {when}', { when: when(key?.created_at) })}</span>
        </p>
        ${
          owner
            ? html`<form method="post" data-confirm="${t('Roll this key? The current one stops working at once.')}">
                ${formFields(ctx, 'roll')}<input type="hidden" name="type" value="${type}" /><button
                  type="submit"
                  class="danger"
                >
                  ${type === 'secret' ? t('Roll secret key') : t('Roll publishable key')}
                </button>
              </form>`
            : html`<p class="muted">${t('Only an owner can roll keys.')}</p>`
        }
      </section>`;
    };
    return html`<p>
        ${t('Keys are shown in full only once, when rolled; afterwards only their last four characters.')}
      </p>
      ${errorFor(state, 'roll')}${keyRow('secret')}${keyRow('publishable')}`;
  },
  actions: {
    roll: {
      ownerOnly: true,
      async run(ctx, form) {
        const type = form.type === 'publishable' ? 'publishable' : 'secret';
        const rolled = await ctx.api.admin<{ key: string }>('POST', '/api_keys/roll', {
          environment: ctx.environment,
          type,
        });
        const { t } = ctx;
        const secret = type === 'secret';
        return {
          notice: secret
            ? t('The secret key was rolled; the old one no longer works.')
            : t('The publishable key was rolled; the old one no longer works.'),
          reveal: html`<div class="reveal" role="status">
            <p>
              ${markup(t, '{key}: shown only now, copy it.', {
                key: html`<strong>${secret ? t('New secret key') : t('New publishable key')}</strong>`,
              })}
            </p>
            <p>
              <code id="new-key">${rolled.key}</code>
              <button type="button" class="secondary" data-copy="${rolled.key}">${t('Copy')}</button>
            </p>
          </div>`,
        };
      },
    },
  },
};

const METHODS: Array<[string, string]> = [
  ['card', 'Card'],
  ['atm', 'ATM transfer (virtual account)'],
  ['cvs', 'Convenience-store code'],
];

/**
 * The end of a settings form: its save button for an owner (or the operator); for a member, who
 * reads the settings but may not change them (the action refuses them too), why there is none.
 */
/** `disabled` for a member: the fields of a settings form they read but may not change. */
const readOnly = (ctx: PageContext) => (ctx.role === 'member' ? html`disabled` : '');

function saveOrRefusal(ctx: PageContext, save: string, refusal: string): Html {
  return ctx.role === 'member'
    ? html`<p class="muted">${refusal}</p>`
    : html`<div><button type="submit">${save}</button></div>`;
}

/**
 * Dunning and proration of the environment (docs/billing-settings.md): when a failed renewal is
 * tried again and what the last failure does, and how switches are charged. Owners set them, as
 * the credits settings beside them in the same billing settings; members read them.
 */
function billingSection(ctx: PageContext, state: PageState, billing: BillingSettings) {
  const { t } = ctx;
  const owner = ctx.role !== 'member';
  const finals: Array<[string, string]> = [
    ['cancel', t('Cancel the subscription')],
    ['past_due', t('Leave it past due')],
  ];
  const upgrades: Array<[string, string]> = [
    ['prorate_now', t('Charge the prorated difference now')],
    ['bill_at_next_renewal', t('Add it to the next renewal')],
  ];
  const downgrades: Array<[string, string]> = [
    ['at_period_end', t('At the end of the paid period')],
    ['now_with_credit', t('Now, crediting the unused part')],
  ];
  const named = (choices: Array<[string, string]>, value: string) =>
    choices.find(([key]) => key === value)?.[1] ?? value;
  return html`<h2 id="billing">${t('Dunning and proration ({environment})', { environment: environmentName(ctx) })}</h2>
    <form class="card" method="post" aria-labelledby="billing">
      ${formFields(ctx, 'billing')}${errorFor(state, 'billing')}
      ${
        owner
          ? html`${field('d-days', t('Retry a failed payment after these days (comma separated, increasing)'), {
              name: 'retry_days',
              value: billing.dunning.retry_days.join(', '),
              required: true,
            })}
            ${select('d-final', t('When the last retry fails'), 'after_final_failure', finals, billing.dunning.after_final_failure)}
            ${select('p-up', t('Upgrades'), 'upgrade', upgrades, billing.proration.upgrade)}
            ${select('p-down', t('Downgrades'), 'downgrade', downgrades, billing.proration.downgrade)}`
          : html`<dl class="facts">
              <dt>${t('Retries (days after the failed payment)')}</dt>
              <dd>${billing.dunning.retry_days.join(', ')}</dd>
              <dt>${t('When the last retry fails')}</dt>
              <dd>${named(finals, billing.dunning.after_final_failure)}</dd>
              <dt>${t('Upgrades')}</dt>
              <dd>${named(upgrades, billing.proration.upgrade)}</dd>
              <dt>${t('Downgrades')}</dt>
              <dd>${named(downgrades, billing.proration.downgrade)}</dd>
            </dl>`
      }
      <p class="muted">${markup(t, 'Last changed: {when}', { when: when(billing.updated_at) })}</p>
      ${
        owner
          ? html`<div><button type="submit">${t('Save billing settings')}</button></div>`
          : html`<p class="muted">${t('Only an owner can change the dunning and proration settings.')}</p>`
      }
    </form>`;
}

/**
 * The credits settings of the environment (docs/credits.md): the low-balance threshold and the
 * overdraft limit. Owners set them; members read them.
 */
function creditsSection(ctx: PageContext, state: PageState, billing: BillingSettings) {
  const { t } = ctx;
  const owner = ctx.role !== 'member';
  const sent = state.form?._action === 'credits' ? state.form : undefined;
  const problem = (path: string) => fieldError(state, 'credits', path);
  const threshold = billing.credits_low_balance_threshold;
  const limit = billing.credits_overdraft_limit;
  const thresholdText = threshold === null ? t('Off') : t('{n} credits', { n: threshold.toLocaleString('en-US') });
  const limitText = limit === 0 ? t('None: never below zero') : t('{n} credits', { n: limit.toLocaleString('en-US') });
  return html`<h2 id="credits">${t('Credits ({environment})', { environment: environmentName(ctx) })}</h2>
    <form class="card" method="post" aria-labelledby="credits">
      ${formFields(ctx, 'credits')}${errorFor(state, 'credits')}
      <p class="muted">
        ${t(
          "A customer's credits balance: credits.low_balance is sent when a change takes it below the threshold. Spends may take it below zero down to minus the overdraft limit; the next grants repay that first, and take-backs never go below zero.",
        )}
      </p>
      ${
        owner
          ? html`${field('c-threshold', t('Low-balance threshold (credits; empty: off)'), {
                name: 'low_balance_threshold',
                value: prefill(sent, 'low_balance_threshold', threshold),
                extra: html` inputmode="numeric"`,
                error: problem('credits_low_balance_threshold'),
              })}
              ${field('c-overdraft', t('Overdraft limit (credits; 0: never below zero)'), {
                name: 'overdraft_limit',
                value: prefill(sent, 'overdraft_limit', limit),
                extra: html` inputmode="numeric"`,
                error: problem('credits_overdraft_limit'),
              })}
              <div><button type="submit">${t('Save credits settings')}</button></div>`
          : html`<dl class="facts">
                <dt>${t('Low-balance threshold')}</dt>
                <dd>${thresholdText}</dd>
                <dt>${t('Overdraft limit')}</dt>
                <dd>${limitText}</dd>
              </dl>
              <p class="muted">${t('Only an owner can change the credits settings.')}</p>`
      }
    </form>`;
}

/** The environment's name in the user's words. */
const environmentName = (ctx: PageContext) => (ctx.environment === 'SANDBOX' ? ctx.t('Sandbox') : ctx.t('Production'));

/** Which processor takes this environment's payments; owners set it (the keys are never shown back). */
function paymentsSection(ctx: PageContext, state: PageState, processor: PaymentProcessor) {
  const { t } = ctx;
  const sandbox = ctx.environment === 'SANDBOX';
  const names = { ecpay: 'ECPay', payuni: 'PAYUNi' } as const;
  const current =
    processor.processor === 'ecpay' || processor.processor === 'payuni'
      ? t('{processor}, merchant {merchant} at {url}: {methods}; keys stored sealed.', {
          processor: names[processor.processor],
          merchant: processor.merchant_id ?? '',
          url: processor.endpoint_url ?? '',
          methods: processor.methods.join(', '),
        })
      : processor.processor === 'sandbox'
        ? t('The sandbox simulator (test cards).')
        : markup(t, 'None. {warning}', {
            warning: html`<strong>${t('Production refuses every payment until a processor is set.')}</strong>`,
          });
  const owner = ctx.role !== 'member';
  return html`<h2 id="payments">${t('Payments ({environment})', { environment: environmentName(ctx) })}</h2>
    <form class="card" method="post" aria-labelledby="payments" autocomplete="off">
      ${formFields(ctx, 'payments')}${errorFor(state, 'payments')}${errorFor(state, 'removePayments')}
      <p>${markup(t, 'Processor now: {current}', { current })}</p>
      <p class="muted">
        ${markup(
          t,
          "Through ECPay, buyers pay one-time items on ECPay's pages (card, ATM transfer or convenience-store code). Through PAYUNi, buyers pay by card in PAYUNi's card fields (one-time items and subscriptions, renewed with the card PAYUNi keeps; refunds go back through PAYUNi). Refunds through ECPay are not available yet (docs/payments.md). Last changed: {when}",
          { when: when(processor.updated_at) },
        )}
      </p>
      ${
        owner
          ? html`${select(
                'pp-processor',
                t('Processor'),
                'processor',
                sandbox
                  ? [
                      ['sandbox', t('Sandbox simulator')],
                      ['ecpay', t('ECPay (綠界)')],
                      ['payuni', t('PAYUNi (統一金流)')],
                    ]
                  : [
                      ['ecpay', t('ECPay (綠界)')],
                      ['payuni', t('PAYUNi (統一金流)')],
                    ],
                processor.processor === 'none' ? 'ecpay' : processor.processor,
              )}
              ${field('pp-merchant', t('Merchant ID (ECPay: digits; PAYUNi: MerID)'), { name: 'merchant_id', value: processor.merchant_id })}
              ${field('pp-key', t('HashKey (enter again to change anything)'), { name: 'hash_key', type: 'password', extra: html` autocomplete="new-password"` })}
              ${field('pp-iv', 'HashIV', { name: 'hash_iv', type: 'password', extra: html` autocomplete="new-password"` })}
              ${sandbox ? field('pp-endpoint', t("Processor address (optional: its test site by default, or an emulator's)"), { name: 'endpoint_url', type: 'url', value: processor.endpoint_url }) : ''}
              <fieldset>
                <legend>${t('Buyers may pay by (PAYUNi always takes cards)')}</legend>
                ${METHODS.map(([method, label]) => checkbox(`pp-${method}`, `method_${method}`, t(label), !processor.credentials_set || processor.methods.includes(method)))}
              </fieldset>
              <div><button type="submit">${t('Save payment processor')}</button></div>`
          : html`<p class="muted">${t('Only an owner can change the payment processor.')}</p>`
      }
    </form>
    ${
      owner && processor.updated_at
        ? buttonForm(
            ctx,
            'removePayments',
            t('Remove payment processor'),
            {},
            {
              danger: true,
              confirm: sandbox
                ? t('Go back to the sandbox simulator?')
                : t('Production will refuse every payment. Remove?'),
            },
          )
        : ''
    }`;
}

// English keys of the zh-TW table, as TAX_TYPE_TEXT.
const EINVOICE_PROVIDERS = { ecpay: 'ECPay (綠界)', amego: 'Amego (光貿)' } as const;

/**
 * Which provider issues this environment's e-invoices (電子發票); owners set it, whole (the
 * keys are never shown back, only whether they are set). The API's problems are shown at
 * their fields.
 */
function einvoicesSection(ctx: PageContext, state: PageState, settings: EinvoiceSettings) {
  const { t } = ctx;
  const sandbox = ctx.environment === 'SANDBOX';
  const owner = ctx.role !== 'member';
  // After a refused save, the form shows what was sent (never the keys).
  const sent = state.form?._action === 'einvoices' ? state.form : undefined;
  const value = (name: string, stored: string | null) => prefill(sent, name, stored);
  const problem = (path: string) => fieldError(state, 'einvoices', path);
  const provider = sent?.provider ?? settings.provider;
  const current =
    settings.provider === 'none'
      ? t('None: no e-invoice is issued.')
      : einvoiceSettingsText(ctx, settings, settings.provider);
  const keyHint = (kind: 'ecpay' | 'amego') =>
    settings.credentials_set && settings.provider === kind
      ? t('Set (stored sealed, never shown). Enter it again to save any change.')
      : undefined;
  const secret = (id: string, label: string, name: string, kind: 'ecpay' | 'amego') =>
    field(id, label, {
      name,
      type: 'password',
      extra: html` autocomplete="new-password"`,
      hint: keyHint(kind),
      error: problem(name),
    });
  return html`<h2 id="einvoices">${t('E-invoices ({environment})', { environment: environmentName(ctx) })}</h2>
    <form class="card" method="post" aria-labelledby="einvoices" autocomplete="off">
      ${formFields(ctx, 'einvoices')}${errorFor(state, 'einvoices')}
      <p>${t('E-invoices now: {current}', { current })}</p>
      <p class="muted">
        ${markup(
          t,
          'With a provider set, an e-invoice (電子發票) is issued through it for every paid one-time order and every paid invoice, to the carrier the buyer chose; refunds void it or issue an allowance. E-invoices still pending are asked of the provider they were made for: changing the provider leaves them failing. Last changed: {when}',
          { when: when(settings.updated_at) },
        )}
      </p>
      ${
        owner
          ? html`${select(
                'ei-provider',
                t('Provider'),
                'provider',
                [
                  ['none', t('None (no e-invoices)')],
                  ['ecpay', t(EINVOICE_PROVIDERS.ecpay)],
                  ['amego', t(EINVOICE_PROVIDERS.amego)],
                ],
                provider,
                problem('provider'),
              )}
              ${field('ei-seller', t("Seller's tax ID (統一編號, 8 digits)"), { name: 'seller_tax_id', value: value('seller_tax_id', settings.seller_tax_id), extra: html` inputmode="numeric" maxlength="8"`, error: problem('seller_tax_id') })}
              ${select(
                'ei-tax',
                t('Tax type of what is sold'),
                'tax_type',
                Object.entries(TAX_TYPE_TEXT).map(([type, text]): [string, string] => [type, t(text)]),
                value('tax_type', settings.tax_type),
                problem('tax_type'),
              )}
              ${checkbox('ei-donation', 'donation_offered', t('Buyers may donate the e-invoice (愛心碼)'), sent ? sent.donation_offered === 'on' : settings.donation_offered)}
              <fieldset>
                <legend>ECPay</legend>
                ${field('ei-merchant', t('Merchant ID (MerchantID, digits)'), { name: 'merchant_id', value: value('merchant_id', settings.merchant_id), extra: html` inputmode="numeric"`, error: problem('merchant_id') })}
                ${secret('ei-hash-key', 'HashKey', 'hash_key', 'ecpay')}
                ${secret('ei-hash-iv', 'HashIV', 'hash_iv', 'ecpay')}
              </fieldset>
              <fieldset>
                <legend>Amego</legend>
                ${secret('ei-app-key', 'App Key', 'app_key', 'amego')}
              </fieldset>
              ${sandbox ? field('ei-endpoint', t("Sandbox endpoint URL (optional: the provider's test site by default, or an emulator's)"), { name: 'endpoint_url', type: 'url', value: value('endpoint_url', settings.endpoint_url), error: problem('endpoint_url') }) : ''}
              <div><button type="submit">${t('Save e-invoice settings')}</button></div>`
          : html`<p class="muted">${t('Only an owner can change the e-invoice settings.')}</p>`
      }
    </form>`;
}

/** The e-invoice settings in one sentence: the provider, the seller, the tax type, donations, the keys. */
function einvoiceSettingsText(ctx: PageContext, settings: EinvoiceSettings, provider: 'ecpay' | 'amego'): string {
  const { t } = ctx;
  const name = t(EINVOICE_PROVIDERS[provider]);
  const values = {
    provider: settings.merchant_id
      ? t('{provider}, merchant {merchant}', { provider: name, merchant: settings.merchant_id })
      : name,
    seller: settings.seller_tax_id ?? '',
    taxType: t(TAX_TYPE_TEXT[settings.tax_type]),
    donation: settings.donation_offered ? t('buyers may donate') : t('no donation'),
    endpoint: settings.endpoint_url ?? '',
    keys: settings.credentials_set ? t('keys set (stored sealed).') : t('no keys.'),
  };
  return ctx.environment === 'SANDBOX'
    ? t('{provider}, seller {seller}, {taxType}, {donation}, at {endpoint}; {keys}', values)
    : t('{provider}, seller {seller}, {taxType}, {donation}; {keys}', values);
}
