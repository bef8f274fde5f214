import { OpenApiRegistry, registerPromotionRoutes } from '@billing/contracts';

describe('promotions OpenAPI', () => {
  it('registers every public route with its schemas', () => {
    const doc = registerPromotionRoutes(new OpenApiRegistry()).toOpenApi({ title: 't', version: '1' });
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/coupons',
      '/coupons/{id}',
      '/promotion-codes',
      '/promotion-codes/validate',
      '/promotion-codes/{id}',
      '/promotion-codes/{id}/redemptions',
    ]);
    expect(Object.keys(doc.paths['/promotion-codes/{id}']!).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.components.schemas).toHaveProperty('Coupon');
    expect(doc.components.schemas).toHaveProperty('PromotionCode');
    expect(doc.components.schemas).toHaveProperty('PromotionCodeValidation');
  });
});
