import { OpenApiRegistry, registerBillingRoutes } from '@billing/contracts';

describe('billing OpenAPI', () => {
  it('registers every public route with its schemas', () => {
    const doc = registerBillingRoutes(new OpenApiRegistry()).toOpenApi({ title: 't', version: '1' });
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/customers',
      '/customers/entitlements',
      '/customers/external/{external_id}',
      '/customers/{id}',
      '/einvoices',
      '/einvoices/{id}',
      '/invoices',
      '/invoices/{id}',
      '/subscriptions',
      '/subscriptions/{id}',
      '/subscriptions/{id}/cancel',
      '/subscriptions/{id}/resume',
    ]);
    expect(Object.keys(doc.paths['/customers/{id}']!).sort()).toEqual(['get', 'patch']);
    for (const id of [
      'Customer',
      'CustomerListItem',
      'CustomerWithSubscriptions',
      'Subscription',
      'Entitlements',
      'Invoice',
      'InvoiceList',
    ]) {
      expect(doc.components.schemas).toHaveProperty(id);
    }
  });
});
