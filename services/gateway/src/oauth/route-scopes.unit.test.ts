import { publicApiDocument } from '../openapi';
import { SCOPED_READS, scopeRequiredFor } from './route-scopes';

describe('scopeRequiredFor', () => {
  it.each([
    ['GET', '/v1/products', 'products:read'],
    ['GET', '/v1/products/prod_1', 'products:read'],
    ['GET', '/v1/products/by-slug/monthly', 'products:read'],
    ['HEAD', '/v1/products', 'products:read'],
    ['GET', '/v1/subscriptions', 'subscriptions:read'],
    ['GET', '/v1/subscriptions/sub_1', 'subscriptions:read'],
    ['GET', '/v1/customers', 'customers:read'],
    ['GET', '/v1/customers/cus_1', 'customers:read'],
    ['GET', '/v1/customers/external/u-42', 'customers:read'],
    ['GET', '/v1/customers/entitlements', 'customers:read'],
    ['GET', '/v1/orders', 'orders:read'],
    ['GET', '/v1/orders/ord_1', 'orders:read'],
    ['GET', '/v1/analytics/metrics', 'analytics:read'],
  ])('%s %s needs %s', (method, path, scope) => expect(scopeRequiredFor(method, path)).toBe(scope));

  it.each([
    ['POST', '/v1/products'],
    ['PATCH', '/v1/products/prod_1'],
    ['POST', '/v1/customers'],
    ['DELETE', '/v1/subscriptions/sub_1'],
    ['POST', '/v1/subscriptions/sub_1/cancel'],
    ['POST', '/v1/checkout/sessions'],
    ['GET', '/v1/subscriptions/sub_1/switch-preview'],
    ['GET', '/v1/subscriptions/sub_1/schedule'],
    ['GET', '/v1/customers/cus_1/balance'],
    ['GET', '/v1/customers/cus_1/entitlements'],
    ['GET', '/v1/invoices'],
    ['GET', '/v1/refunds'],
    ['GET', '/v1/webhooks'],
    ['GET', '/v1/coupons'],
    ['GET', '/v1/payment-links'],
    ['GET', '/v1/productsx'],
    ['GET', '/v1/orders/ord_1/refunds'],
  ])('%s %s is refused to any token', (method, path) => expect(scopeRequiredFor(method, path)).toBeUndefined());
});

describe('the reads tokens may make', () => {
  it('are exactly those the API reference lists with the OAuth 2.0 scheme, each with its scope', () => {
    const document = publicApiDocument() as unknown as {
      paths: Record<string, Record<string, { security?: Array<Record<string, string[]>> }>>;
    };
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) =>
        (operation.security ?? [])
          .filter((requirement) => requirement.oauth2)
          .map((requirement) => `${method.toUpperCase()} /v1${path.replace(/\{\w+\}/g, '*')} ${requirement.oauth2}`),
      ),
    );
    const enforced = SCOPED_READS.map(({ path, scope }) => `GET ${path.replace(/:\w+/g, '*')} ${scope}`);
    expect(documented.sort()).toEqual(enforced.sort());
  });
});
