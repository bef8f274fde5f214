import { eventually } from '@billing/testing';
import {
  type AmegoEmulator,
  startAmegoEinvoiceEmulator,
} from '../../../services/billing/dist/einvoices/providers/amego/emulator';
import { type DashboardAgent, createUser, signedIn } from '../src/dashboard-helpers';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import type { Platform } from '../src/platform';

jest.setTimeout(120000);

const PASSWORD = 'correct horse battery';
const AMEGO = { sellerTaxId: '12345678', appKey: 'sHeq7t8G1wiQvhAuIM27' };

/**
 * The dashboard's pages in zh-TW (issue 32): a user who picked 中文 gets every page of an
 * organization, and the invitation pages, with `<html lang="zh-TW">`, its title in Chinese and
 * none of its English headings; what an action says back is in Chinese too. Each page is read
 * with records to show (a subscription on a test clock with its invoice and e-invoice, a
 * coupon and its code, a payment link, a webhook endpoint, an email to the buyer).
 */
describe('the merchant dashboard in zh-TW', () => {
  let platform: Platform;
  let receiver: Receiver;
  let amego: AmegoEmulator;
  let shop: Awaited<ReturnType<typeof lifecycleOrganization>>;
  let owner: DashboardAgent;
  let base: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    amego = await startAmegoEinvoiceEmulator(AMEGO);
    receiver = await startReceiver();
    platform = await startLifecyclePlatform();
    shop = await lifecycleOrganization(platform, receiver);
    const org = shop.org.id;
    expect(
      (
        await shop.client.admin('PUT', `/organizations/${org}/einvoice_settings?environment=sandbox`, {
          provider: 'amego',
          app_key: AMEGO.appKey,
          seller_tax_id: AMEGO.sellerTaxId,
          tax_type: 'TAXED',
          donation_offered: true,
          endpoint_url: amego.url,
        })
      ).status,
    ).toBe(200);
    const { clock, subscription } = await shop.subscribeOnClock('mei@shop.example', '4242424242424242', {
      einvoice: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
    });
    const [invoice] = await shop.invoicesOf(subscription.id);
    const einvoice = await eventually(async () => {
      const [found] = (await shop.send('GET', `/einvoices?invoice_id=${invoice.id}`)).body.data;
      expect(found?.status).toBe('issued');
      return found;
    }, 30000);
    const product = (await shop.send('GET', '/products/by-slug/pro')).body;
    const coupon = await shop.send('POST', '/coupons', {
      name: 'Half',
      discount_type: 'PERCENTAGE',
      discount_amount: 50,
      duration: 'once',
    });
    const code = await shop.send('POST', '/promotion-codes', { coupon_id: coupon.body.id, code: 'HALF50' });
    expect([coupon.status, code.status]).toEqual([201, 201]);
    expect((await shop.send('POST', '/payment-links', { productId: product.id })).status).toBe(201);
    const endpoints = await shop.client.admin('GET', `/organizations/${org}/webhook_endpoints?environment=SANDBOX`);
    const email = await eventually(async () => {
      const [found] = (await shop.client.admin('GET', `/organizations/${org}/emails?environment=SANDBOX`)).body.data;
      expect(found?.id).toEqual(expect.any(String));
      return found;
    }, 30000);
    Object.assign(ids, {
      clock,
      subscription: subscription.id,
      invoice: invoice.id,
      einvoice: einvoice.id,
      product: product.id,
      code: code.body.data.id,
      endpoint: endpoints.body.data[0].id,
      email: email.id,
    });

    await createUser(platform.gatewayUrl, org, 'owner@shop.example', 'owner', PASSWORD);
    owner = await signedIn(platform.gatewayUrl, 'owner@shop.example', PASSWORD);
    base = `/dashboard/${org}/sandbox`;
    expect((await owner.get(`/dashboard/language/zh-TW?back=${encodeURIComponent(base)}`)).status).toBe(303);
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
    await amego?.close();
  });

  /** Each page: its path under the organization's Sandbox, its title in zh-TW, and English headings it must not show. */
  const pages: Array<[string, () => string, string, string[]]> = [
    ['overview', () => '', '總覽', ['Monthly recurring revenue', 'Active subscriptions', 'New and churned']],
    ['products', () => '/products', '商品', ['Create a product', 'Active products', 'Billing interval']],
    ['a product', () => `/products/${ids.product}`, '商品', ['Save changes', 'Display order', '>Edit<']],
    [
      'coupons and codes',
      () => '/coupons',
      '折價券與優惠碼',
      ['Create a coupon', 'Promotion codes', 'Discount type', '% off'],
    ],
    ['a promotion code', () => `/promotion-codes/${ids.code}`, '優惠碼', ['Redemptions', 'Not redeemed yet']],
    ['payment links', () => '/payment-links', '付款連結', ['Create a payment link', 'Views', 'Deactivate']],
    ['subscriptions', () => '/subscriptions', '訂閱', ['Period ends', '>Filter<', 'No subscriptions']],
    [
      'a subscription',
      () => `/subscriptions/${ids.subscription}`,
      '訂閱',
      ['Switch plan', 'Cancel at period end', 'Current period', 'every 1 month', 'Mobile barcode'],
    ],
    ['invoices', () => '/invoices', '帳單', ['Invoices from', 'From (Taipei day)', '>Export CSV<', '>Refunds<']],
    ['an invoice', () => `/invoices/${ids.invoice}`, '帳單', ['Subtotal', 'Invoice lines', 'Random code']],
    ['refunds', () => '/refunds', '退款', ['Refunds from', 'No refunds in these days', '>Payments<', 'Reason']],
    ['e-invoices', () => '/einvoices', '電子發票', ['is asked of the provider', 'Attempts', 'Deadline']],
    ['an e-invoice', () => `/einvoices/${ids.einvoice}`, '電子發票', ['Allowances', 'Random code', 'order number']],
    ['webhooks', () => '/webhooks', 'Webhooks', ['Add an endpoint', 'Webhook endpoints', 'Events to send']],
    ['a webhook endpoint', () => `/webhooks/${ids.endpoint}`, 'Webhook 端點', ['Signing secret', 'Delivery log']],
    ['emails', () => '/emails', '電子郵件', ['Emails buyers get', 'Emails to buyers', 'Sandbox keeps every']],
    ['an email', () => `/emails/${ids.email}`, '電子郵件', ['Written', 'Open the email as buyers see it']],
    ['API keys', () => '/api-keys', 'API 金鑰', ['Secret key', 'Publishable key', 'Roll secret key']],
    ['settings', () => '/settings', '設定', ['Branding', 'Customer portal', 'Dunning and proration', 'E-invoices now']],
    ['test clocks', () => '/test-clocks', '測試時鐘', ['Create a test clock', 'Frozen time']],
    ['a test clock', () => `/test-clocks/${ids.clock}`, '測試時鐘', ['Advance clock', 'What ran', 'Clock time']],
    ['the team', () => '/team', '團隊', ['Invite a user', 'Dashboard users']],
  ];

  it.each(pages)('shows %s in zh-TW', async (_name, path, title, english) => {
    const page = await owner.get(`${base}${path()}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<html lang="zh-TW">');
    expect(page.html).toContain(`<title>${title} · 測試環境 · `);
    expect(page.html).toMatch(new RegExp(`<h1>${title} <span class="badge">測試環境</span></h1>`));
    for (const words of english) expect({ words, found: page.html.includes(words) }).toEqual({ words, found: false });
  });

  it('says what an action did, and asks before it, in zh-TW', async () => {
    const products = await owner.get(`${base}/products`);
    expect(products.html).toContain(`data-confirm="要封存「Pro」嗎？"`);
    // The page's script shows its progress and copies in the page's words.
    expect(products.html).toContain('<body data-working="處理中…" data-copied="已複製">');
    const saved = await owner.submit(`${base}/settings`, { _action: 'branding', name: 'Shop' });
    expect(saved.status).toBe(303);
    expect((await owner.get(saved.location!)).html).toContain('<p class="notice" role="status">品牌外觀已儲存。</p>');
    const created = await owner.submit(`${base}/products`, {
      _action: 'create',
      name: 'Tea',
      type: 'ONE_TIME',
      price: '120',
    });
    expect((await owner.get(created.location!)).html).toContain('已建立商品「Tea」。');
  });

  it("says the API's refusals in zh-TW, by their codes, next to the form and at the field", async () => {
    const refused = await owner.submit(`${base}/settings`, {
      _action: 'billing',
      retry_days: '3, 500',
      after_final_failure: 'never',
      upgrade: 'prorate_now',
      downgrade: 'at_period_end',
    });
    expect(refused.status).toBe(422);
    const error = /<p class="error" role="alert" id="error-billing">([^<]*)<\/p>/.exec(refused.html)?.[1];
    expect(error).toMatch(/^部分欄位的值無法儲存。（/);
    expect(error).toContain('dunning.after_final_failure：不是可接受的值');
    expect(error).not.toContain('Request validation failed');
  });

  it('shows the invitation pages in zh-TW', async () => {
    const invited = await createUser(platform.gatewayUrl, shop.org.id, 'new@shop.example', 'member');
    const page = await owner.get(invited.invite_path!);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<html lang="zh-TW">');
    expect(page.html).toContain('<title>接受邀請 · 訂閱帳務後台</title>');
    expect(page.html).toContain('<h1>以 new@shop.example 加入</h1>');
    expect(page.html).not.toContain('Set password');
    const gone = await owner.get('/dashboard/invite/nothing-here');
    expect([gone.status, gone.html.includes('<h1>找不到邀請</h1>')]).toEqual([404, true]);
    expect(gone.html).not.toContain('Ask an owner');
  });
});
