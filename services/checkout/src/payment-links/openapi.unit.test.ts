import { OpenApiRegistry, registerPaymentLinkRoutes } from '@billing/contracts';

describe('payment-link routes in OpenAPI', () => {
  const doc = registerPaymentLinkRoutes(new OpenApiRegistry()).toOpenApi({ title: 'Billing API', version: '1.0.0' });
  const op = (path: string, method: string) => (doc.paths[path] as Record<string, any>)[method];

  it('documents the five endpoints, Secret Key only', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(['/payment-links', '/payment-links/{id}']);
    for (const [path, method] of [
      ['/payment-links', 'post'],
      ['/payment-links', 'get'],
      ['/payment-links/{id}', 'get'],
      ['/payment-links/{id}', 'patch'],
      ['/payment-links/{id}', 'delete'],
    ] as const) {
      expect(op(path, method).security).toEqual([{ secretKey: [] }]);
    }
    expect(op('/payment-links', 'post').responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/PaymentLink',
    });
    const schemas = doc.components.schemas as Record<string, { required?: string[] }>;
    expect(schemas.PaymentLink?.required).toEqual(
      expect.arrayContaining(['id', 'url', 'url_id', 'view_count', 'session_count', 'completed_count']),
    );
  });
});
