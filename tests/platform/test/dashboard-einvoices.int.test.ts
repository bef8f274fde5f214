import { createLogger } from '@billing/service';
import { eventually } from '@billing/testing';
import {
  type AmegoEmulator,
  startAmegoEinvoiceEmulator,
} from '../../../services/billing/dist/einvoices/providers/amego/emulator';
import { runEinvoiceWork } from '../../../services/billing/dist/einvoices/worker';
import { type DashboardAgent, createUser, signedIn } from '../src/dashboard-helpers';
import { lifecycleOrganization } from '../src/lifecycle-helpers';
import { type Platform, startPlatform } from '../src/platform';

jest.setTimeout(180000);

const PASSWORD = 'correct horse battery';
const AMEGO = { sellerTaxId: '12345678', appKey: 'sHeq7t8G1wiQvhAuIM27' };
const HOUR = 3_600_000;
/** A page's text with each run of whitespace (its line breaks) as one space. */
const oneLine = (html: string) => html.replace(/\s+/g, ' ');

/**
 * E-invoices in the dashboard (issue 29): an owner sets the provider per environment (keys never
 * shown back, the API's problems at their fields, members refused); the invoices of the customer
 * and subscription pages, the invoice page and the E-invoices page show each e-invoice's number,
 * status and carrier, each page with one call for all of them; one still failing near its
 * deadline stands out.
 */
describe('e-invoices in the merchant dashboard', () => {
  let platform: Platform;
  let amego: AmegoEmulator;
  let shop: Awaited<ReturnType<typeof lifecycleOrganization>>;
  let owner: DashboardAgent;
  let base: string;
  /** The platform's and the emulator's clock: real time, moved ahead by the tests. */
  let ahead = 0;
  const now = () => new Date(Date.now() + ahead);
  /** Billing's request lines: how many times a page asked for e-invoices. */
  const billingLines: string[] = [];
  const einvoiceListCalls = () => billingLines.filter((line) => line.includes('"path":"/v1/einvoices"')).length;

  beforeAll(async () => {
    amego = await startAmegoEinvoiceEmulator(AMEGO, now);
    platform = await startPlatform({
      checkout: true,
      billing: true,
      now,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
      logger: (name) =>
        createLogger(name, {
          level: 'info',
          destination: { write: (line: string) => void (name === 'billing' && billingLines.push(line)) },
        }),
    });
    shop = await lifecycleOrganization(platform);
    await createUser(platform.gatewayUrl, shop.org.id, 'owner@shop.example', 'owner', PASSWORD);
    owner = await signedIn(platform.gatewayUrl, 'owner@shop.example', PASSWORD);
    base = `/dashboard/${shop.org.id}/sandbox`;
  });
  afterAll(async () => {
    await platform?.stop();
    await amego?.close();
  });

  const settingsOf = async (environment: string) =>
    (await shop.client.admin('GET', `/organizations/${shop.org.id}/einvoice_settings?environment=${environment}`)).body;
  const einvoicesOf = async (query: string) => (await shop.send('GET', `/einvoices?${query}`)).body.data;
  /** The page, and how many times billing was asked for a list of e-invoices while it was made. */
  const pageWithCalls = async (agent: DashboardAgent, path: string) => {
    const before = einvoiceListCalls();
    const page = await agent.get(path);
    expect(page.status).toBe(200);
    return { html: page.html, calls: einvoiceListCalls() - before };
  };

  it('sets the provider per environment: keys never shown again, problems at their fields, members refused', async () => {
    const path = `${base}/settings`;
    expect((await owner.get(path)).html).toContain('E-invoices now: None: no e-invoice is issued.');

    const bad = await owner.submit(path, {
      _action: 'einvoices',
      provider: 'ecpay',
      merchant_id: 'abc',
      hash_key: 'short',
      hash_iv: 'ejCk326UnaZWKisg',
      seller_tax_id: '1234',
      tax_type: 'TAXED',
    });
    expect(bad.status).toBe(422);
    expect(bad.html).toMatch(/id="error-einvoices"/);
    expect(bad.html).toMatch(/id="ei-merchant-error">must be the ECPay merchant id/);
    expect(bad.html).toMatch(/id="ei-hash-key-error">must be the 16 characters ECPay issued/);
    expect(bad.html).toMatch(/id="ei-seller-error">must be 8 digits/);
    expect(bad.html).toMatch(/id="ei-seller"[^>]*aria-describedby="ei-seller-error"[^>]*aria-invalid="true"/);
    expect(bad.html).not.toMatch(/id="ei-hash-iv-error"/);
    // What was typed is kept, except the keys; ECPay stays chosen.
    expect(bad.html).toMatch(/id="ei-merchant"[^>]*value="abc"/);
    expect(bad.html).toMatch(/<option value="ecpay"\s+selected/);
    expect(bad.html).not.toContain('ejCk326UnaZWKisg');
    expect(await settingsOf('sandbox')).toMatchObject({ provider: 'none', credentials_set: false });

    const saved = await owner.submit(path, {
      _action: 'einvoices',
      provider: 'amego',
      app_key: AMEGO.appKey,
      seller_tax_id: AMEGO.sellerTaxId,
      tax_type: 'TAXED',
      donation_offered: 'on',
      endpoint_url: amego.url,
    });
    expect(saved.status).toBe(303);
    const page = (await owner.get(saved.location!)).html;
    expect(page).toContain('Amego e-invoice settings saved');
    expect(page).toMatch(/E-invoices now: Amego \(光貿\),\s+seller 12345678, Taxed 5 %/);
    expect(page).toContain('Set (stored sealed, never shown). Enter it again to save any change.');
    expect(page).not.toContain(AMEGO.appKey);
    expect(await settingsOf('sandbox')).toMatchObject({
      provider: 'amego',
      enabled: true,
      seller_tax_id: AMEGO.sellerTaxId,
      donation_offered: true,
      endpoint_url: amego.url,
      credentials_set: true,
    });

    // Production: the provider's own address only, and a seller whose check digit is wrong is refused at its field.
    const production = `/dashboard/${shop.org.id}/production/settings`;
    expect((await owner.get(production)).html).not.toContain('id="ei-endpoint"');
    const refused = await owner.submit(production, {
      _action: 'einvoices',
      provider: 'amego',
      app_key: AMEGO.appKey,
      seller_tax_id: AMEGO.sellerTaxId,
      tax_type: 'ZERO_RATED',
    });
    expect(refused.status).toBe(422);
    expect(refused.html).toMatch(/id="ei-seller-error">seller_tax_id must have a valid check digit/);
    expect(refused.html).toMatch(/<option value="ZERO_RATED"\s+selected/);
    expect(await settingsOf('production')).toMatchObject({ provider: 'none' });

    await createUser(platform.gatewayUrl, shop.org.id, 'member@shop.example', 'member', PASSWORD);
    const member = await signedIn(platform.gatewayUrl, 'member@shop.example', PASSWORD);
    const seen = (await member.get(path)).html;
    expect(seen).toContain('Only an owner can change the e-invoice settings');
    expect(seen).toMatch(/E-invoices now: Amego/);
    expect((await member.submit(path, { _action: 'einvoices', provider: 'none' })).status).toBe(403);
    expect(await settingsOf('sandbox')).toMatchObject({ provider: 'amego' });
  });

  it('shows each invoice’s e-invoice with one call a page, and the failing one near its deadline on the E-invoices page', async () => {
    const { subscription: barcode, session: barcodeSession } = await shop.subscribe(
      'mei@shop.example',
      '4242424242424242',
      {
        einvoice: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
      },
    );
    const [barcodeInvoice] = await shop.invoicesOf(barcode.id);
    const issued = await eventually(async () => {
      const [e] = await einvoicesOf(`invoice_id=${barcodeInvoice.id}`);
      expect(e?.status).toBe('issued');
      return e;
    }, 30000);

    // The provider refuses every attempt for the next buyer: the e-invoice stays pending.
    for (let i = 0; i < 60; i += 1) amego.failNext('/json/f0401', 'refuse');
    const { subscription: donor } = await shop.subscribe('hank@shop.example', '4242424242424242', {
      einvoice: { type: 'DONATION', donation_code: '168' },
    });
    const [donorInvoice] = await shop.invoicesOf(donor.id);
    const failing = await eventually(async () => {
      const [e] = await einvoicesOf(`invoice_id=${donorInvoice.id}`);
      expect(e?.last_error?.code).toEqual(expect.any(String));
      return e;
    }, 30000);
    expect(failing).toMatchObject({ status: 'pending', pending_action: 'issue' });

    // The customer page: the invoice's e-invoice in its row, and a link to all of the customer's.
    const customer = await pageWithCalls(owner, `${base}/customers/${barcode.customer_id}`);
    expect(customer.calls).toBe(1);
    expect(customer.html).toContain('<th scope="col">E-invoice</th>');
    expect(customer.html).toContain(`<a href="${base}/einvoices/${issued.id}">${issued.number}</a>`);
    expect(customer.html).toContain('Mobile barcode /ABC+123');
    expect(customer.html).toContain(`href="${base}/einvoices?customer_id=${barcode.customer_id}"`);

    const subscriptionPage = await pageWithCalls(owner, `${base}/subscriptions/${donor.id}`);
    expect(subscriptionPage.calls).toBe(1);
    expect(subscriptionPage.html).toContain(`<a href="${base}/einvoices/${failing.id}">Not issued yet</a>`);
    expect(subscriptionPage.html).toContain('Donated (code 168)');

    const invoice = await pageWithCalls(owner, `${base}/invoices/${barcodeInvoice.id}`);
    expect(invoice.calls).toBe(1);
    expect(invoice.html).toContain('<h2 id="einvoice">E-invoice</h2>');
    expect(invoice.html).toContain(issued.random_code);

    // Thirty-seven hours later, still refused: the deadline monitor has warned (48 hours for a consumer's).
    ahead += 37 * HOUR;
    const warned = await eventually(async () => {
      await runEinvoiceWork(platform.billing!.service.context);
      const [e] = await einvoicesOf(`invoice_id=${donorInvoice.id}`);
      expect(e?.deadline_warned_at).toEqual(expect.any(String));
      return e;
    }, 30000);
    expect(warned.status).toBe('pending');
    // The dashboard's 12-hour session ended meanwhile.
    const operator = await signedIn(platform.gatewayUrl, 'owner@shop.example', PASSWORD);

    const list = await pageWithCalls(operator, `${base}/einvoices`);
    expect(list.calls).toBe(1);
    expect(oneLine(list.html)).toContain(
      'role="alert"> 1 e-invoice below is still not issued close to or past the deadline',
    );
    const rowOf = (html: string, id: string) =>
      html.split('<tr').find((row) => row.includes(`/einvoices/${id}"`)) ?? '';
    const failingRow = rowOf(list.html, warned.id);
    expect(failingRow).toMatch(/^\s+class="warned"/);
    expect(failingRow).toContain('Deadline near');
    expect(failingRow).toContain('to issue');
    expect(failingRow).toContain(`${warned.last_error.code}: ${warned.last_error.message}`);
    expect(failingRow).toMatch(new RegExp(`<td>\\s*${warned.attempt_count}<div class="einvoice-error">`));
    const issuedRow = rowOf(list.html, issued.id);
    expect(issuedRow).not.toContain('class="warned"');
    expect(issuedRow).toContain(issued.number);
    expect(issuedRow).toContain('Mobile barcode /ABC+123');

    const pending = (await operator.get(`${base}/einvoices?status=pending`)).html;
    expect(pending).toContain(`/einvoices/${warned.id}"`);
    expect(pending).not.toContain(`/einvoices/${issued.id}"`);
    const ofCustomer = (await operator.get(`${base}/einvoices?customer_id=${barcode.customer_id}`)).html;
    expect(ofCustomer).toContain(`/einvoices/${issued.id}"`);
    expect(ofCustomer).not.toContain(`/einvoices/${warned.id}"`);

    // The search box finds an e-invoice by its number as a receipt prints it, and a checkout by its id.
    const search = async (q: string) => oneLine((await operator.get(`${base}/search?q=${encodeURIComponent(q)}`)).html);
    const printed = `${issued.number.slice(0, 2).toLowerCase()}-${issued.number.slice(2)}`;
    expect(await search(printed)).toContain(`<a href="${base}/einvoices/${issued.id}">E-invoice ${issued.number}</a>`);
    expect(await search('ZZ-00000000')).toContain('Nothing matches ZZ-00000000.');
    const checkout = await search(barcodeSession.id);
    expect(checkout).toContain(`Checkout ${barcodeSession.id}`);
    expect(checkout).toContain(`href="${base}/customers/${barcode.customer_id}">mei@shop.example</a>`);
    expect(checkout).toContain(`href="${base}/subscriptions/${barcode.id}"`);
    const orderId = (await shop.send('GET', `/checkout/sessions/${barcodeSession.id}`)).body.order_id as string;
    const order = await search(orderId);
    expect(order).toContain(`Order <code>${orderId}</code>`);
    expect(order).toContain(`href="${base}/customers/${barcode.customer_id}">mei@shop.example</a>`);
    expect(order).toContain('Sandbox <code>');

    const detail = (await operator.get(`${base}/einvoices/${warned.id}`)).html;
    expect(oneLine(detail)).toContain('Close to its deadline and still not issued');
    expect(detail).toContain(warned.last_error.message);
    expect(detail).toContain(warned.merchant_order_number);

    // An unknown provider is refused at its field; None turns e-invoices off, those made stay listed.
    const settings = `${base}/settings`;
    const unknown = await operator.submit(settings, {
      _action: 'einvoices',
      provider: 'paper',
      seller_tax_id: '12345678',
    });
    expect(unknown.status).toBe(422);
    expect(unknown.html).toMatch(/id="ei-provider"[^>]*aria-invalid="true"/);
    expect(await settingsOf('sandbox')).toMatchObject({ provider: 'amego' });
    const off = await operator.submit(settings, { _action: 'einvoices', provider: 'none' });
    expect(oneLine((await operator.get(off.location!)).html)).toContain(
      'E-invoices turned off: no e-invoice is issued for later payments.',
    );
    expect(await settingsOf('sandbox')).toMatchObject({ provider: 'none', enabled: false, credentials_set: false });
    expect((await operator.get(`${base}/einvoices`)).html).toContain(`/einvoices/${issued.id}"`);

    // Another organization's dashboard knows nothing of it.
    const other = await lifecycleOrganization(platform);
    await createUser(platform.gatewayUrl, other.org.id, 'owner@other.example', 'owner', PASSWORD);
    const stranger = await signedIn(platform.gatewayUrl, 'owner@other.example', PASSWORD);
    expect((await stranger.get(`/dashboard/${other.org.id}/sandbox/einvoices/${issued.id}`)).status).toBe(404);
    expect((await stranger.get(`/dashboard/${other.org.id}/sandbox/einvoices`)).html).toContain('No e-invoices yet.');
    for (const q of [issued.number, barcodeSession.id, orderId]) {
      const found = await stranger.get(`/dashboard/${other.org.id}/sandbox/search?q=${q}`);
      expect(found.html).toContain(`Nothing matches ${q}.`);
    }
  });
});
