import { OpenApiRegistry, registerCheckoutRoutes } from '@billing/contracts';

describe('checkout-session routes in OpenAPI', () => {
  const doc = registerCheckoutRoutes(new OpenApiRegistry()).toOpenApi({ title: 'Billing API', version: '1.0.0' });
  const op = (path: string, method: string) => (doc.paths[path] as Record<string, any>)[method];

  it('documents create and read with both keys and shared components', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(['/checkout/sessions', '/checkout/sessions/{id}']);
    expect(op('/checkout/sessions', 'post').security).toEqual([{ secretKey: [] }, { publishableKey: [] }]);
    const schemaOf = (path: string, method: string, status: string) =>
      op(path, method).responses[status].content['application/json'].schema;
    expect(schemaOf('/checkout/sessions', 'post', '201')).toEqual({
      $ref: '#/components/schemas/CheckoutSessionCreated',
    });
    expect(schemaOf('/checkout/sessions/{id}', 'get', '200')).toEqual({ $ref: '#/components/schemas/CheckoutSession' });
    expect(schemaOf('/checkout/sessions', 'post', '422')).toEqual({ $ref: '#/components/schemas/Error' });
    const schemas = doc.components.schemas as Record<string, { required?: string[] }>;
    expect(schemas.CheckoutSessionCreated?.required).toEqual(
      expect.arrayContaining(['id', 'url', 'expires_at', 'amount', 'requires_payment_method', 'einvoice_enabled']),
    );
    expect(schemas.Einvoice).toBeDefined();
  });
});
