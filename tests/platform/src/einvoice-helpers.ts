import { eventually } from '@billing/testing';
import type { jsonApi } from './platform';

/**
 * Waits until checkout has heard that the organization issues e-invoices: its replica of
 * billing's settings comes over the bus (and is read through a 5-second cache), so a session
 * opened at once after the settings may not offer the choice yet. Opens throwaway sessions of
 * `productSlug` until one answers `einvoice_enabled: true`.
 */
export async function untilCheckoutIssuesEinvoices(send: ReturnType<typeof jsonApi>, productSlug: string) {
  await eventually(async () => {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: productSlug,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(session.body.einvoice_enabled).toBe(true);
  }, 30_000);
}
