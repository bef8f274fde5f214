import {
  OpenApiRegistry,
  invalidParametersResponse,
  registerBillingRoutes,
  registerCheckoutRoutes,
  registerPaymentLinkRoutes,
  registerProductRoutes,
  registerPromotionRoutes,
  registerRefundRoutes,
  registerWebhookRoutes,
} from '../index';

/** The error statuses every public route documents (docs/errors.md). */
describe('documented parameter and body errors', () => {
  const registry = new OpenApiRegistry();
  for (const register of [
    registerProductRoutes,
    registerPromotionRoutes,
    registerCheckoutRoutes,
    registerPaymentLinkRoutes,
    registerBillingRoutes,
    registerRefundRoutes,
    registerWebhookRoutes,
  ]) {
    register(registry);
  }
  const routes = registry.registeredRoutes.map((route) => [`${route.method} ${route.path}`, route] as const);

  it.each(routes.filter(([, route]) => route.query))('%s documents 400 for its query parameters', (_name, route) => {
    expect(route.responses[400]).toBeDefined();
  });

  it.each(routes.filter(([, route]) => !route.body))('%s documents no 422: it has no body', (_name, route) => {
    expect(route.responses[422]).toBeUndefined();
  });

  it('describes the general 400 as bad_request with details', () => {
    const doc = registry.toOpenApi({ title: 't', version: '1' });
    const list = (doc.paths['/payment-links'] as Record<string, any>).get;
    expect(list.responses['400']).toEqual({
      description: invalidParametersResponse.description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    });
  });
});
