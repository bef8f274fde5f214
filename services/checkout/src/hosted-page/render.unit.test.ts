import { escapeHtml, formatTwd } from './html';
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

  it('renders message pages', () => {
    const html = renderMessagePage('Session expired', 'Start again.', { href: 'https://shop.example', text: 'Back' });
    expect(html).toContain('<h1>Session expired</h1>');
    expect(html).toContain('href="https://shop.example"');
  });

  it('formats and escapes', () => {
    expect(formatTwd(0)).toBe('NT$0');
    expect(formatTwd(1234567)).toBe('NT$1,234,567');
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
