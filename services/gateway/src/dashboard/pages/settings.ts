import { html } from '@billing/service';
import { when } from '../html';
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
  title: () => 'Settings',
  async view(ctx, state) {
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
    return html`<h2 id="branding">Branding</h2>
      <form class="card" method="post" aria-labelledby="branding">
        ${formFields(ctx, 'branding')}${errorFor(state, 'branding')}
        <p class="muted">Shown on the hosted checkout and portal pages of both environments.</p>
        ${field('b-name', 'Business name', { name: 'name', value: org.name, required: true })}
        ${field('b-logo', 'Logo URL (optional)', { name: 'logo_url', type: 'url', value: org.logo_url })}
        ${field('b-color', 'Brand colour (#rrggbb, optional)', { name: 'brand_color', value: org.brand_color })}
        ${field('b-site', 'Website URL (optional)', { name: 'website_url', type: 'url', value: org.website_url })}
        <label for="b-origins">Origins allowed to use the Publishable Key (one a line; empty allows any)</label
        ><textarea id="b-origins" name="allowed_origins" rows="3">${org.allowed_origins.join('\n')}</textarea>
        <div><button type="submit">Save branding</button></div>
      </form>
      ${paymentsSection(ctx, state, processor)} ${einvoicesSection(ctx, state, einvoices)}
      <h2 id="billing">Dunning and proration (${ctx.environment === 'SANDBOX' ? 'Sandbox' : 'Production'})</h2>
      <form class="card" method="post" aria-labelledby="billing">
        ${formFields(ctx, 'billing')}${errorFor(state, 'billing')}
        ${field('d-days', 'Retry a failed payment after these days (comma separated, increasing)', { name: 'retry_days', value: billing.dunning.retry_days.join(', '), required: true })}
        ${select(
          'd-final',
          'When the last retry fails',
          'after_final_failure',
          [
            ['cancel', 'Cancel the subscription'],
            ['past_due', 'Leave it past due'],
          ],
          billing.dunning.after_final_failure,
        )}
        ${select(
          'p-up',
          'Upgrades',
          'upgrade',
          [
            ['prorate_now', 'Charge the prorated difference now'],
            ['bill_at_next_renewal', 'Add it to the next renewal'],
          ],
          billing.proration.upgrade,
        )}
        ${select(
          'p-down',
          'Downgrades',
          'downgrade',
          [
            ['at_period_end', 'At the end of the paid period'],
            ['now_with_credit', 'Now, crediting the unused part'],
          ],
          billing.proration.downgrade,
        )}
        <p class="muted">Last changed: ${when(billing.updated_at)}</p>
        <div><button type="submit">Save billing settings</button></div>
      </form>
      <h2 id="portal">Customer portal</h2>
      <form class="card" method="post" aria-labelledby="portal">
        ${formFields(ctx, 'portal')}${errorFor(state, 'portal')}
        ${portal ? html`<input type="hidden" name="configuration_id" value="${portal.id}" />` : html`<p class="muted">No configuration yet: the built-in features apply until you save one.</p>`}
        ${field('pc-return', 'Default return URL', { name: 'default_return_url', type: 'url', value: portal?.default_return_url })}
        ${field('pc-name', 'Business name shown', { name: 'business_name', value: portal?.business_profile.name })}
        ${checkbox('pc-invoices', 'invoice_history', 'Customers see their invoices', f?.invoice_history.enabled ?? true)}
        ${checkbox('pc-card', 'payment_method_update', 'Customers update their card', f?.payment_method_update.enabled ?? true)}
        ${checkbox('pc-cancel', 'cancel', 'Customers cancel', f?.cancel.enabled ?? true)}
        ${select(
          'pc-cancel-mode',
          'Cancellation takes effect',
          'cancel_mode',
          [
            ['at_period_end', 'At the end of the paid period'],
            ['immediately', 'Immediately'],
          ],
          f?.cancel.mode,
        )}
        ${checkbox('pc-switch', 'subscription_update', 'Customers switch plans', f?.subscription_update.enabled ?? false)}
        <fieldset>
          <legend>Plans customers may switch to</legend>
          ${subscriptionProducts.length ? subscriptionProducts.map((p, i) => checkbox(`pc-prod-${i}`, `product:${p.id}`, p.name, f?.subscription_update.products.includes(p.id) ?? false)) : html`<p class="muted">No subscription products.</p>`}
        </fieldset>
        <div><button type="submit">Save portal</button></div>
      </form>`;
  },
  actions: {
    payments: {
      ownerOnly: true,
      async run(ctx, form) {
        if (form.processor === 'sandbox') {
          await ctx.api.admin('PUT', `/payment_processor?environment=${ctx.envSlug}`, { processor: 'sandbox' });
          return { notice: 'Payments go to the sandbox simulator.' };
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
        return { notice: `${name} settings saved. The keys are stored sealed and are not shown again.` };
      },
    },
    removePayments: {
      ownerOnly: true,
      async run(ctx) {
        await ctx.api.admin('DELETE', `/payment_processor?environment=${ctx.envSlug}`);
        return { notice: 'Payment processor removed.' };
      },
    },
    einvoices: {
      ownerOnly: true,
      async run(ctx, form) {
        const path = `/einvoice_settings?environment=${ctx.envSlug}`;
        if (form.provider === 'none') {
          await ctx.api.admin('PUT', path, { provider: 'none' });
          return { notice: 'E-invoices turned off: no e-invoice is issued for later payments.' };
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
        return { notice: `${name} e-invoice settings saved. The keys are stored sealed and are not shown again.` };
      },
    },
    branding: {
      async run(ctx, form) {
        await ctx.api.admin('PATCH', '', {
          name: text(form.name),
          logo_url: nullableText(form.logo_url),
          brand_color: nullableText(form.brand_color),
          website_url: nullableText(form.website_url),
          allowed_origins: (form.allowed_origins ?? '').split(/\s+/).filter(Boolean),
        });
        return { notice: 'Branding saved.' };
      },
    },
    billing: {
      async run(ctx, form) {
        const days = (form.retry_days ?? '')
          .split(/[\s,]+/)
          .filter(Boolean)
          .map((d) => (/^\d+$/.test(d) ? Number(d) : d));
        await ctx.api.admin('PATCH', `/billing_settings?environment=${ctx.envSlug}`, {
          dunning: { retry_days: days, after_final_failure: form.after_final_failure },
          proration: { upgrade: form.upgrade, downgrade: form.downgrade },
        });
        return { notice: 'Billing settings saved.' };
      },
    },
    portal: {
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
        return { notice: 'Portal configuration saved.' };
      },
    },
  },
};

export const apiKeysPage: DashboardPage = {
  path: 'api-keys',
  section: 'api-keys',
  title: () => 'API keys',
  async view(ctx, state) {
    const org = await readOrganization(ctx);
    const keys = org.api_keys.filter((k) => k.environment === ctx.environment && !k.revoked_at);
    const owner = ctx.role !== 'member';
    const keyRow = (type: 'secret' | 'publishable') => {
      const key = keys.find((k) => k.type === type);
      const prefix = `${type === 'secret' ? 'sk' : 'pk'}_${ctx.environment === 'SANDBOX' ? 'test' : 'live'}_`;
      return html`<section class="card" aria-labelledby="key-${type}">
        <h2 id="key-${type}">${type === 'secret' ? 'Secret key' : 'Publishable key'}</h2>
        <p>
          <code>${prefix}…${key?.last4 ?? '????'}</code> <span class="muted">created ${when(key?.created_at)}</span>
        </p>
        ${
          owner
            ? html`<form method="post" data-confirm="Roll this key? The current one stops working at once.">
                ${formFields(ctx, 'roll')}<input type="hidden" name="type" value="${type}" /><button
                  type="submit"
                  class="danger"
                >
                  Roll ${type} key
                </button>
              </form>`
            : html`<p class="muted">Only an owner can roll keys.</p>`
        }
      </section>`;
    };
    return html`<p>Keys are shown in full only once, when rolled; afterwards only their last four characters.</p>
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
        return {
          notice: `The ${type} key was rolled; the old one no longer works.`,
          reveal: html`<div class="reveal" role="status">
            <p><strong>New ${type} key</strong>: shown only now, copy it.</p>
            <p>
              <code id="new-key">${rolled.key}</code>
              <button type="button" class="secondary" data-copy="${rolled.key}">Copy</button>
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

/** Which processor takes this environment's payments; owners set it (the keys are never shown back). */
function paymentsSection(ctx: PageContext, state: PageState, processor: PaymentProcessor) {
  const sandbox = ctx.environment === 'SANDBOX';
  const names = { ecpay: 'ECPay', payuni: 'PAYUNi' } as const;
  const current =
    processor.processor === 'ecpay' || processor.processor === 'payuni'
      ? html`${names[processor.processor]}, merchant ${processor.merchant_id} at ${processor.endpoint_url}:
        ${processor.methods.join(', ')}; keys stored sealed.`
      : processor.processor === 'sandbox'
        ? html`The sandbox simulator (test cards).`
        : html`None. <strong>Production refuses every payment until a processor is set.</strong>`;
  const owner = ctx.role !== 'member';
  return html`<h2 id="payments">Payments (${sandbox ? 'Sandbox' : 'Production'})</h2>
    <form class="card" method="post" aria-labelledby="payments" autocomplete="off">
      ${formFields(ctx, 'payments')}${errorFor(state, 'payments')}${errorFor(state, 'removePayments')}
      <p>Processor now: ${current}</p>
      <p class="muted">
        Through ECPay, buyers pay one-time items on ECPay's pages (card, ATM transfer or convenience-store code).
        Through PAYUNi, buyers pay by card in PAYUNi's card fields (one-time items and subscriptions, renewed with the
        card PAYUNi keeps; refunds go back through PAYUNi). Refunds through ECPay are not available yet
        (docs/payments.md). Last changed: ${when(processor.updated_at)}
      </p>
      ${
        owner
          ? html`${select(
                'pp-processor',
                'Processor',
                'processor',
                sandbox
                  ? [
                      ['sandbox', 'Sandbox simulator'],
                      ['ecpay', 'ECPay (綠界)'],
                      ['payuni', 'PAYUNi (統一金流)'],
                    ]
                  : [
                      ['ecpay', 'ECPay (綠界)'],
                      ['payuni', 'PAYUNi (統一金流)'],
                    ],
                processor.processor === 'none' ? 'ecpay' : processor.processor,
              )}
              ${field('pp-merchant', 'Merchant ID (ECPay: digits; PAYUNi: MerID)', { name: 'merchant_id', value: processor.merchant_id })}
              ${field('pp-key', 'HashKey (enter again to change anything)', { name: 'hash_key', type: 'password', extra: html` autocomplete="new-password"` })}
              ${field('pp-iv', 'HashIV', { name: 'hash_iv', type: 'password', extra: html` autocomplete="new-password"` })}
              ${sandbox ? field('pp-endpoint', "Processor address (optional: its test site by default, or an emulator's)", { name: 'endpoint_url', type: 'url', value: processor.endpoint_url }) : ''}
              <fieldset>
                <legend>Buyers may pay by (PAYUNi always takes cards)</legend>
                ${METHODS.map(([method, label]) => checkbox(`pp-${method}`, `method_${method}`, label, !processor.credentials_set || processor.methods.includes(method)))}
              </fieldset>
              <div><button type="submit">Save payment processor</button></div>`
          : html`<p class="muted">Only an owner can change the payment processor.</p>`
      }
    </form>
    ${owner && processor.updated_at ? buttonForm(ctx, 'removePayments', 'Remove payment processor', {}, { danger: true, confirm: sandbox ? 'Go back to the sandbox simulator?' : 'Production will refuse every payment. Remove?' }) : ''}`;
}

const EINVOICE_PROVIDERS = { ecpay: 'ECPay (綠界)', amego: 'Amego (光貿)' } as const;

/**
 * Which provider issues this environment's e-invoices (電子發票); owners set it, whole (the
 * keys are never shown back, only whether they are set). The API's problems are shown at
 * their fields.
 */
function einvoicesSection(ctx: PageContext, state: PageState, settings: EinvoiceSettings) {
  const sandbox = ctx.environment === 'SANDBOX';
  const owner = ctx.role !== 'member';
  // After a refused save, the form shows what was sent (never the keys).
  const sent = state.form?._action === 'einvoices' ? state.form : undefined;
  const value = (name: string, stored: string | null) => prefill(sent, name, stored);
  const problem = (path: string) => fieldError(state, 'einvoices', path);
  const provider = sent?.provider ?? settings.provider;
  const current =
    settings.provider === 'none'
      ? html`None: no e-invoice is issued.`
      : html`${EINVOICE_PROVIDERS[settings.provider]}${settings.merchant_id ? `, merchant ${settings.merchant_id}` : ''},
        seller ${settings.seller_tax_id}, ${TAX_TYPE_TEXT[settings.tax_type]},
        ${settings.donation_offered ? 'buyers may donate' : 'no donation'}${sandbox ? html`, at ${settings.endpoint_url}` : ''};
        ${settings.credentials_set ? 'keys set (stored sealed).' : 'no keys.'}`;
  const keyHint = (kind: 'ecpay' | 'amego') =>
    settings.credentials_set && settings.provider === kind
      ? 'Set (stored sealed, never shown). Enter it again to save any change.'
      : undefined;
  const secret = (id: string, label: string, name: string, kind: 'ecpay' | 'amego') =>
    field(id, label, {
      name,
      type: 'password',
      extra: html` autocomplete="new-password"`,
      hint: keyHint(kind),
      error: problem(name),
    });
  return html`<h2 id="einvoices">E-invoices (${sandbox ? 'Sandbox' : 'Production'})</h2>
    <form class="card" method="post" aria-labelledby="einvoices" autocomplete="off">
      ${formFields(ctx, 'einvoices')}${errorFor(state, 'einvoices')}
      <p>E-invoices now: ${current}</p>
      <p class="muted">
        With a provider set, an e-invoice (電子發票) is issued through it for every paid one-time order and every paid
        invoice, to the carrier the buyer chose; refunds void it or issue an allowance. E-invoices still pending are
        asked of the provider they were made for: changing the provider leaves them failing. Last changed:
        ${when(settings.updated_at)}
      </p>
      ${
        owner
          ? html`${select(
                'ei-provider',
                'Provider',
                'provider',
                [
                  ['none', 'None (no e-invoices)'],
                  ['ecpay', EINVOICE_PROVIDERS.ecpay],
                  ['amego', EINVOICE_PROVIDERS.amego],
                ],
                provider,
                problem('provider'),
              )}
              ${field('ei-seller', "Seller's tax ID (統一編號, 8 digits)", { name: 'seller_tax_id', value: value('seller_tax_id', settings.seller_tax_id), extra: html` inputmode="numeric" maxlength="8"`, error: problem('seller_tax_id') })}
              ${select(
                'ei-tax',
                'Tax type of what is sold',
                'tax_type',
                Object.entries(TAX_TYPE_TEXT),
                value('tax_type', settings.tax_type),
                problem('tax_type'),
              )}
              ${checkbox('ei-donation', 'donation_offered', 'Buyers may donate the e-invoice (愛心碼)', sent ? sent.donation_offered === 'on' : settings.donation_offered)}
              <fieldset>
                <legend>ECPay</legend>
                ${field('ei-merchant', 'Merchant ID (MerchantID, digits)', { name: 'merchant_id', value: value('merchant_id', settings.merchant_id), extra: html` inputmode="numeric"`, error: problem('merchant_id') })}
                ${secret('ei-hash-key', 'HashKey', 'hash_key', 'ecpay')}
                ${secret('ei-hash-iv', 'HashIV', 'hash_iv', 'ecpay')}
              </fieldset>
              <fieldset>
                <legend>Amego</legend>
                ${secret('ei-app-key', 'App Key', 'app_key', 'amego')}
              </fieldset>
              ${sandbox ? field('ei-endpoint', "Sandbox endpoint URL (optional: the provider's test site by default, or an emulator's)", { name: 'endpoint_url', type: 'url', value: value('endpoint_url', settings.endpoint_url), error: problem('endpoint_url') }) : ''}
              <div><button type="submit">Save e-invoice settings</button></div>`
          : html`<p class="muted">Only an owner can change the e-invoice settings.</p>`
      }
    </form>`;
}
