import { messagesFor } from './messages';
import { renderLinkCanceled, renderLinkNotFound, renderLinkThanks, renderLinkUnavailable } from './payment-link-pages';

const t = messagesFor('en');
const merchant = { name: 'Leaf & Co', logo_url: null, brand_color: null, website_url: 'https://leaf.example/?a=1&b=2' };
const url = 'https://pay.example/pay/abc';

describe('payment link pages', () => {
  it('say why a link opens no checkout', () => {
    expect(renderLinkNotFound({ t, merchant: null })).toContain('This payment link is not valid.');
    const page = { t, merchant };
    expect(renderLinkUnavailable(page, 'inactive')).toContain('This payment link is no longer active.');
    expect(renderLinkUnavailable(page, 'soldOut')).toContain('reached its limit of purchases');
    expect(renderLinkUnavailable(page, 'productGone')).toContain('no longer available');
    expect(renderLinkUnavailable(page, 'down')).toContain('Please try again later.');
    expect(renderLinkUnavailable(page, 'down')).toContain('<h1>Payment link unavailable</h1>');
  });

  it('thank the buyer with the receipt, dated in Taipei, and lead back to the merchant', () => {
    const receipt = { product: 'Pro <plan>', amount: 1299, date: '2026-02-28T16:30:00.000Z' };
    const page = renderLinkThanks({ t, merchant }, url, receipt);
    expect(page).toContain('Pro &lt;plan&gt;');
    expect(page).toContain('1 March 2026');
    expect(page).toMatch(/id="back" href="https:\/\/leaf.example\/\?a=1&amp;b=2">Back to Leaf &amp; Co</);
    expect(renderLinkThanks({ t, merchant: null }, url)).toMatch(
      /href="https:\/\/pay.example\/pay\/abc">Return to the shop</,
    );
    expect(renderLinkThanks({ t, merchant: null }, undefined)).not.toContain('id="back"');
  });

  it('lead a buyer who left back to the merchant, or to start again from the link', () => {
    expect(renderLinkCanceled({ t, merchant }, url)).toContain('Back to Leaf &amp; Co');
    const alone = renderLinkCanceled({ t, merchant: { ...merchant, website_url: null } }, url);
    expect(alone).toMatch(/href="https:\/\/pay.example\/pay\/abc">Start again</);
  });
});
