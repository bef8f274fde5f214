import type { Einvoice } from '@billing/contracts';
import { chooseLocale, messagesFor, planAllowance, planUsagePrices, priceSchedule } from './messages';
import { type CheckoutPageView, renderCheckoutPage, renderMessagePage } from './render';

const view: CheckoutPageView = {
  sessionId: 'cs_1',
  productName: 'Pro <plan>',
  billingPeriod: 'per month',
  amountSubtotal: 1299,
  amountTotal: 1039,
  discount: { label: '20% off', amount: 260 },
  requiresPaymentMethod: true,
  cancelUrl: 'https://shop.example/cancel?a=1&b=2',
  action: '/checkout/cs_1',
  livemode: false,
  schedule: 'NT$1,039 today, then NT$1,299 per month',
};

describe('hosted checkout page', () => {
  it('labels every field and gives it the standard autocomplete token', () => {
    const html = renderCheckoutPage(view);
    for (const [name, token] of [
      ['email', 'email'],
      ['name', 'name'],
      ['card_number', 'cc-number'],
      ['exp', 'cc-exp'],
      ['cvc', 'cc-csc'],
    ]) {
      expect(html).toContain(`<label for="field-${name}">`);
      expect(html).toMatch(new RegExp(`id="field-${name}" name="${name}" [^>]*autocomplete="${token}"`));
    }
  });

  it('shows the price, the discount and the total in whole TWD', () => {
    const html = renderCheckoutPage(view);
    expect(html).toContain('NT$1,039');
    expect(html).toContain('20% off');
    expect(html).toContain('−NT$260');
    expect(html).toContain('per month');
  });

  it('says plainly that a trial charges nothing today, and what it costs after', () => {
    const html = renderCheckoutPage({ ...view, amountTotal: 0, trial: { days: 14, thenAmount: 299 } });
    expect(html).toContain('<p class="price">NT$299');
    expect(html).toMatch(/Due today<\/strong><strong>NT\$0/);
    expect(html).toContain('Start 14-day free trial');
    expect(html).not.toContain('Pay NT$0');
  });

  it('says a plain plan’s price once, and the schedule only where it says more', () => {
    const plain = { ...view, discount: undefined, amountSubtotal: 299, amountTotal: 299, schedule: 'NT$299 per month' };
    const html = renderCheckoutPage(plain);
    expect(html).toContain('<p class="price">NT$299 <span class="muted">per month</span></p>');
    expect(html).not.toContain('id="schedule"');
    expect(renderCheckoutPage(view)).toContain(
      '<p class="schedule" id="schedule">NT$1,039 today, then NT$1,299 per month</p>',
    );
    const trial = renderCheckoutPage({ ...plain, trial: { days: 7, thenAmount: 299 }, schedule: 'Free for 7 days' });
    expect(trial).toContain('id="schedule"');
  });

  it('escapes what merchants and buyers typed', () => {
    const html = renderCheckoutPage({ ...view, email: 'a"b@example.com', error: '<script>x</script>' });
    expect(html).toContain('Pro &lt;plan&gt;');
    expect(html).toContain('value="a&quot;b@example.com" readonly');
    expect(html).not.toContain('<script>x</script>');
    expect(html).toContain('href="https://shop.example/cancel?a=1&amp;b=2"');
  });

  it('asks for no card when none is needed, and hides the sandbox hint in live mode', () => {
    const html = renderCheckoutPage({ ...view, requiresPaymentMethod: false, livemode: true });
    expect(html).not.toContain('cc-number');
    expect(html).not.toContain('Sandbox');
  });

  it("offers a processor's methods: ECPay's in place of the card fields, PAYUNi's codes beside its card fields", () => {
    const zh = messagesFor('zh-TW');
    const ecpay = renderCheckoutPage({
      ...view,
      t: zh,
      processorMethods: { processor: 'ecpay', methods: ['card', 'atm', 'cvs'] },
    });
    expect(ecpay).toContain('信用卡（綠界安全付款頁）');
    expect(ecpay).toContain('前往綠界付款');
    expect(ecpay).toContain('款項在綠界測試環境處理');
    expect(ecpay).not.toContain('name="card_number"');

    const payuniFields = {
      sdkToken: 'tok_1',
      scriptUrl: 'https://payuni.example/sdk.js',
      bindScriptUrl: 'https://pay.example/checkout/payuni-fields.js',
      env: 'S' as const,
    };
    const payuni = renderCheckoutPage({
      ...view,
      payuniFields,
      processorMethods: { processor: 'payuni', methods: ['card', 'atm'] },
    });
    expect(payuni).toMatch(/value="card"\s+checked/);
    expect(payuni).toContain('ATM transfer (virtual account)');
    expect(payuni).not.toContain('Convenience-store payment code');
    expect(payuni).toContain('id="payuni-fields"');
    expect(payuni).toContain('data-code-label="Continue to PAYUNi"');
    expect(payuni).toMatch(/Sandbox: this goes to PAYUNi(&#39;|')s test environment/);
    expect(payuni).toContain('Pay NT$1,039');
    expect(payuni).not.toContain('name="card_number"');
    expect(payuni).toContain('<script src="https://pay.example/checkout/payuni-fields.js"></script>');

    const cardOnly = renderCheckoutPage({ ...view, payuniFields });
    expect(cardOnly).not.toContain('id="methods"');
    expect(cardOnly).toContain('id="payuni-fields"');
  });

  it('renders message pages', () => {
    const html = renderMessagePage('Session expired', 'Start again.', { href: 'https://shop.example', text: 'Back' });
    expect(html).toContain('<h1>Session expired</h1>');
    expect(html).toContain('href="https://shop.example"');
  });

  it('dates a receipt by the day in Taipei, in the page’s language', () => {
    const receipt = { product: 'Pro', amount: 1234567, date: '2026-02-28T16:30:00.000Z' };
    const en = renderMessagePage('Thank you', 'Paid.', undefined, { receipt });
    expect(en).toContain('NT$1,234,567');
    expect(en).toMatch(/<dd>1 March 2026<\/dd>/);
    const zh = renderMessagePage('感謝', '已付款', undefined, { receipt, t: messagesFor('zh-TW') });
    expect(zh).toMatch(/<dd>2026年3月1日<\/dd>/);
  });
});

describe('the e-invoice section (電子發票)', () => {
  const member = { form: { type: 'MEMBER' as const }, donationOffered: true };
  const radios = (html: string) => [...html.matchAll(/name="einvoice_type" value="(\w+)"/g)].map((m) => m[1]);

  it('offers the member carrier (chosen), a barcode, a certificate, a donation and a company, above the pay button', () => {
    const html = renderCheckoutPage({ ...view, t: messagesFor('zh-TW'), einvoice: member });
    expect(html).toContain('<legend>電子發票</legend>');
    expect(radios(html)).toEqual(['MEMBER', 'MOBILE_BARCODE', 'CITIZEN_CERTIFICATE', 'DONATION', 'B2B']);
    expect(html).toMatch(/value="MEMBER"\s+checked/);
    for (const text of [
      '會員載具',
      '手機條碼載具',
      '自然人憑證條碼',
      '捐贈發票',
      '公司發票（統一編號）',
      '愛心碼',
      '公司抬頭（選填）',
    ]) {
      expect(html).toContain(text);
    }
    expect(html.indexOf('id="einvoice"')).toBeLessThan(html.indexOf('id="pay"'));
    expect(html).toMatch(
      /<label for="field-einvoice_tax_id">統一編號<\/label>\s*<input id="field-einvoice_tax_id" name="einvoice_tax_id"[^>]*inputmode="numeric"/,
    );
  });

  it('in English, without the donation where the organization does not offer it', () => {
    const html = renderCheckoutPage({ ...view, einvoice: { ...member, donationOffered: false } });
    expect(html).toContain('<legend>E-invoice</legend>');
    expect(radios(html)).toEqual(['MEMBER', 'MOBILE_BARCODE', 'CITIZEN_CERTIFICATE', 'B2B']);
    expect(html).toContain('Member carrier');
    expect(html).toContain('Company title (optional)');
    expect(html).not.toContain('einvoice_donation_code');
  });

  it('shows a choice made already, with what it holds', () => {
    const html = renderCheckoutPage({
      ...view,
      einvoice: { form: { type: 'B2B', tax_id: '04595257', company_name: 'Leaf & Co' }, donationOffered: true },
    });
    expect(html).toMatch(/value="B2B"\s+checked/);
    expect(html).not.toMatch(/value="MEMBER"\s+checked/);
    expect(html).toMatch(/id="field-einvoice_tax_id" [^>]*value="04595257"/);
    expect(html).toMatch(/id="field-einvoice_company_name" [^>]*value="Leaf &amp; Co"/);
  });

  it('says at the field what a refused barcode must be, in the page’s language', () => {
    const invalid = {
      form: { type: 'MOBILE_BARCODE' as const, barcode: '/AB12' },
      donationOffered: true,
      invalid: 'barcode' as const,
    };
    const zh = messagesFor('zh-TW');
    const html = renderCheckoutPage({ ...view, t: zh, einvoice: invalid, error: zh.einvoice.invalid });
    expect(html).toContain('請檢查電子發票資料，未收取任何費用。');
    expect(html).toMatch(
      /id="field-einvoice_barcode" [^>]*value="\/AB12" aria-invalid="true" aria-describedby="einvoice-error"/,
    );
    expect(html).toContain('<p class="field-error" id="einvoice-error">手機條碼為「/」加 7 個字元');
    const en = renderCheckoutPage({ ...view, einvoice: invalid });
    expect(en).toContain('A mobile barcode is &quot;/&quot; and 7 characters');
  });

  it('is absent when the organization issues no e-invoices', () => {
    expect(renderCheckoutPage(view)).not.toContain('name="einvoice_type"');
  });
});

describe('the receipt’s e-invoice', () => {
  const receipt = { product: 'Pro', amount: 299, date: '2026-02-28T16:30:00.000Z' };

  it('gives the number and random code once issued', () => {
    const einvoice = { number: 'AB12345678', randomCode: '1234', voided: false };
    const zh = renderMessagePage('感謝', '已付款', undefined, {
      receipt: { ...receipt, einvoice },
      t: messagesFor('zh-TW'),
    });
    expect(zh).toMatch(/<dt>發票號碼<\/dt>\s*<dd>AB-12345678<\/dd>/);
    expect(zh).toMatch(/<dt>隨機碼<\/dt>\s*<dd>1234<\/dd>/);
    const en = renderMessagePage('Thanks', 'Paid.', undefined, {
      receipt: { ...receipt, einvoice: { ...einvoice, voided: true } },
    });
    expect(en).toMatch(/<dt>E-invoice number<\/dt>\s*<dd>AB-12345678 \(voided\)<\/dd>/);
  });

  it('says where it will go before it is issued, the carrier in words', () => {
    const zh = messagesFor('zh-TW');
    const page = (issuedTo: Einvoice, t = zh) =>
      renderMessagePage('感謝', '已付款', undefined, { receipt: { ...receipt, einvoice: { issuedTo } }, t });
    expect(page({ type: 'MEMBER' })).toMatch(/<dt>電子發票<\/dt>\s*<dd>將開立至會員載具<\/dd>/);
    expect(page({ type: 'MOBILE_BARCODE', carrier: '/ABC1234' })).toContain('將開立至手機條碼 /ABC1234');
    expect(page({ type: 'CITIZEN_CERTIFICATE', carrier: 'AB12345678901234' })).toContain(
      '將開立至自然人憑證條碼 AB12345678901234',
    );
    expect(page({ type: 'DONATION', donation_code: '168001' })).toContain('將捐贈至愛心碼 168001');
    expect(page({ type: 'B2B', tax_id: '04595257', company_name: 'Leaf' })).toContain('將開立至統一編號 04595257</dd>');
    const en = messagesFor('en');
    expect(page({ type: 'MEMBER' }, en)).toContain('To be issued to your member carrier');
    expect(page({ type: 'B2B', tax_id: '04595257' }, en)).toContain('To be issued to tax ID number 04595257</dd>');
    expect(renderMessagePage('Thanks', 'Paid.', undefined, { receipt })).not.toContain('receipt-einvoice');
  });
});

describe('hosted page texts', () => {
  it('says what is charged and when, in English and Traditional Chinese', () => {
    const en = messagesFor('en');
    const zh = messagesFor('zh-TW');
    const monthly = { amount: 299, interval: 'month' as const, count: 1 };
    expect(priceSchedule(en, { today: 240, recurring: monthly })).toBe('NT$240 today, then NT$299 per month');
    expect(priceSchedule(zh, { today: 240, recurring: monthly })).toBe('今天 NT$240，之後每月 NT$299');
    expect(priceSchedule(en, { today: 0, recurring: monthly, trialDays: 7 })).toBe(
      'Free for 7 days, then NT$299 per month',
    );
    expect(priceSchedule(zh, { today: 0, recurring: monthly, trialDays: 7 })).toBe('前 7 天免費，之後每月 NT$299');
    expect(priceSchedule(en, { today: 299, recurring: monthly })).toBe('NT$299 per month');
    expect(priceSchedule(en, { today: 1200, recurring: { amount: 1200, interval: 'month', count: 3 } })).toBe(
      'NT$1,200 every 3 months',
    );
    expect(priceSchedule(zh, { today: 1200, recurring: { amount: 1200, interval: 'month', count: 3 } })).toBe(
      '每 3 個月 NT$1,200',
    );
    expect(priceSchedule(en, { today: 480 })).toBe('NT$480, one-time payment');
    expect(priceSchedule(zh, { today: 480 })).toBe('NT$480，一次付清');
    const pack = { amount: 1500, expires_after_days: 30 };
    expect(priceSchedule(en, { today: 300, credits: pack })).toBe(
      'NT$300, one-time payment, for 1,500 credits valid for 30 days',
    );
    expect(priceSchedule(zh, { today: 300, credits: pack })).toBe('NT$300，一次付清，含 1,500 點，30 天內有效');
    expect(priceSchedule(zh, { today: 300, credits: { amount: 50, expires_after_days: null } })).toBe(
      'NT$300，一次付清，含 50 點',
    );
  });

  it("says what a plan's credit allowance grants each paid period, reset or rolled over", () => {
    const en = messagesFor('en');
    const zh = messagesFor('zh-TW');
    const reset = { amount: 1000, expires_after_days: null };
    expect(planAllowance(en, reset)).toBe(
      'Includes 1,000 credits each paid period; unused credits expire when the period ends',
    );
    expect(planAllowance(zh, reset)).toBe('每個付費週期含 1,000 點，未用完的點數於該週期結束時失效');
    expect(planAllowance(zh, { ...reset, expires_after_days: 7 })).toBe(
      '每個付費週期含 1,000 點，未用完的點數於該週期結束或 7 天後失效（以先到者為準）',
    );
    expect(planAllowance(en, { ...reset, rollover: true })).toBe(
      'Includes 1,000 credits each paid period; unused credits carry over',
    );
    expect(planAllowance(zh, { amount: 200, expires_after_days: 90, rollover: true })).toBe(
      '每個付費週期含 200 點，每次發放的點數 90 天內有效',
    );
    expect(planAllowance(en, null)).toBeUndefined();
    // On the page under the price, and only when the plan has one.
    const page = renderCheckoutPage({ ...view, allowance: planAllowance(zh, reset), t: zh });
    expect(page).toContain('<p class="schedule" id="allowance">每個付費週期含 1,000 點');
    expect(renderCheckoutPage(view)).not.toContain('id="allowance"');
  });

  it('says what a plan bills for usage after each period, per meter', () => {
    const prices = [
      { meter: 'api_calls', unit_amount: 1, package_size: 1000 },
      { meter: 'seats', unit_amount: 120, package_size: 1 },
    ];
    expect(planUsagePrices(messagesFor('en'), prices)).toBe(
      'Usage is billed after each period: api_calls NT$1 per 1,000; seats NT$120 each',
    );
    expect(planUsagePrices(messagesFor('zh-TW'), prices)).toBe(
      '每期結束後另依用量計費：api_calls 每 1,000 單位 NT$1；seats 每單位 NT$120',
    );
    expect(planUsagePrices(messagesFor('en'), [])).toBeUndefined();
    expect(renderCheckoutPage({ ...view, usagePrices: 'x' })).toContain('<p class="schedule" id="usage-prices">x</p>');
  });

  it('chooses the language from the locale, else Accept-Language, else English', () => {
    expect(chooseLocale('en', 'zh-TW,zh;q=0.9')).toBe('en');
    expect(chooseLocale(null, 'zh-TW,zh;q=0.9,en;q=0.8')).toBe('zh-TW');
    expect(chooseLocale(undefined, 'fr-FR, en;q=0.5, zh;q=0.7')).toBe('zh-TW');
    expect(chooseLocale(undefined, 'en-US,en;q=0.9')).toBe('en');
    expect(chooseLocale(undefined, 'fr')).toBe('en');
    expect(chooseLocale(undefined, undefined)).toBe('en');
  });

  it('keeps typed fields but never the card number or CVC, and marks prefilled ones read-only', () => {
    const html = renderCheckoutPage({
      ...view,
      email: undefined,
      name: 'Mei',
      typed: { email: 'typed@example.com', exp: '11/33' },
      error: 'Your card was declined.',
    });
    expect(html).toMatch(/id="field-email" [^>]*value="typed@example.com"/);
    expect(html).not.toMatch(/id="field-email" [^>]*readonly/);
    expect(html).toMatch(/id="field-name" [^>]*value="Mei" readonly/);
    expect(html).toMatch(/id="field-exp" [^>]*value="11\/33"/);
    expect(html).not.toMatch(/id="field-card_number" [^>]*value=/);
    expect(html).not.toMatch(/id="field-cvc" [^>]*value=/);
  });

  it('names the merchant with its logo and colour, and has a favicon', () => {
    const html = renderCheckoutPage({
      ...view,
      merchant: {
        name: 'Leaf & Co',
        logo_url: 'https://cdn.example/logo.png',
        brand_color: '#0a7d5a',
        website_url: null,
      },
    });
    expect(html).toContain('<span>Leaf &amp; Co</span>');
    expect(html).toContain('src="https://cdn.example/logo.png"');
    expect(html).toContain('--brand: #0a7d5a');
    expect(html).toContain('<link rel="icon" href="data:image/svg+xml');
  });
});

describe('promotion codes on the hosted page', () => {
  const action = '/checkout/cs_1/promotion-code';
  const spring = { label: '20% off', amount: 96, code: 'SPRING20', couponName: 'Spring <sale>' };
  const plain = { ...view, discount: undefined, amountSubtotal: 480, amountTotal: 480, schedule: 'NT$480' };

  it('shows an applied code by the code and its coupon’s name, not only “20% off”, in both languages', () => {
    for (const t of [messagesFor('en'), messagesFor('zh-TW')]) {
      const html = renderCheckoutPage({ ...plain, t, discount: spring, amountTotal: 384 });
      expect(html).toContain('<div id="discount"><span>SPRING20 · Spring &lt;sale&gt;</span><span>−NT$96</span></div>');
      expect(html).not.toContain('20% off');
      expect(html).toContain(t.lang === 'en' ? 'Pay NT$384' : '付款 NT$384');
    }
    // A session made before coupon names were kept: the code and the discount's label.
    const older = renderCheckoutPage({ ...plain, discount: { ...spring, couponName: null } });
    expect(older).toContain('<span>SPRING20 · 20% off</span>');
  });

  it('offers a field and an Apply button in a form of its own while no code is applied, in the page’s language', () => {
    const en = renderCheckoutPage({ ...plain, promotionCode: { action } });
    expect(en).toMatch(/<form method="post" action="\/checkout\/cs_1\/promotion-code" class="promotion"/);
    expect(en).toContain('<label for="field-promotion_code">Promotion code</label>');
    expect(en).toMatch(/<input\s+id="field-promotion_code"\s+name="code"/);
    expect(en).toMatch(/<button type="submit" class="secondary" id="apply-promotion">Apply<\/button>/);
    // Its own form ends before the payment's starts: Enter in the payment's fields still pays.
    expect(en.indexOf('id="promotion-form"')).toBeLessThan(en.indexOf('id="checkout-form"'));
    expect(en.slice(en.indexOf('id="promotion-form"'), en.indexOf('id="checkout-form"'))).toContain('</form>');
    const zh = renderCheckoutPage({ ...plain, t: messagesFor('zh-TW'), promotionCode: { action } });
    expect(zh).toContain('>優惠碼</label>');
    expect(zh).toContain('>套用</button>');
    expect(renderCheckoutPage(plain)).not.toContain('promotion-form');
  });

  it('says at the field why a code was refused, and keeps what was typed, escaped', () => {
    const t = messagesFor('zh-TW');
    const html = renderCheckoutPage({
      ...plain,
      t,
      promotionCode: { action, typed: 'NOPE"<', error: t.promotion.invalid },
    });
    expect(html).toMatch(/value="NOPE&quot;&lt;"\s+aria-invalid="true" aria-describedby="promotion-error"/);
    expect(html).toContain(`<p class="field-error" id="promotion-error" role="alert">${t.promotion.invalid}</p>`);
  });

  it('lets the buyer remove a code applied on the page, and shows no field beside the merchant’s code', () => {
    const removable = renderCheckoutPage({ ...plain, discount: spring, promotionCode: { action, removable: true } });
    expect(removable).toContain('<input type="hidden" name="remove" value="SPRING20" />');
    expect(removable).toMatch(/id="remove-promotion">Remove SPRING20<\/button>/);
    expect(removable).not.toContain('field-promotion_code');
    const merchants = renderCheckoutPage({ ...plain, discount: spring, promotionCode: undefined });
    expect(merchants).not.toContain('promotion-form');
  });

  it('posts the total it showed with the payment, and shows a trial’s code with what it takes off later', () => {
    expect(renderCheckoutPage({ ...plain, amountTotal: 384 })).toContain(
      '<input type="hidden" name="shown_total" value="384" />',
    );
    const trial = renderCheckoutPage({
      ...plain,
      amountTotal: 0,
      discount: { ...spring, amount: 59 },
      trial: { days: 7, thenAmount: 240 },
    });
    expect(trial).toContain('<span>SPRING20 · Spring &lt;sale&gt;</span><span>−NT$59</span>');
    expect(trial).toMatch(/Due today<\/strong><strong>NT\$0/);
  });
});
