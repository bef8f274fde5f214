import { OpenApiRegistry, registerProductRoutes } from '@billing/contracts';

describe('product routes in OpenAPI', () => {
  const doc = registerProductRoutes(new OpenApiRegistry()).toOpenApi({ title: 'Billing API', version: '1.0.0' });
  const op = (path: string) => (doc.paths[path] as Record<string, any>).get;

  it('documents the three public reads with the keys each accepts, and an app token with products:read', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(['/products', '/products/by-slug/{slug}', '/products/{id}']);
    const app = { oauth2: ['products:read'] };
    expect(op('/products').security).toEqual([{ secretKey: [] }, { publishableKey: [] }, app]);
    expect(op('/products/by-slug/{slug}').security).toEqual([{ secretKey: [] }, { publishableKey: [] }, app]);
    expect(op('/products/{id}').security).toEqual([{ secretKey: [] }, app]);
  });

  it('refers to shared Product, ProductList and Error components', () => {
    const schemaOf = (path: string, status: string) => op(path).responses[status].content['application/json'].schema;
    expect(schemaOf('/products', '200')).toEqual({ $ref: '#/components/schemas/ProductList' });
    expect(schemaOf('/products', '400')).toEqual({ $ref: '#/components/schemas/Error' });
    expect(schemaOf('/products/{id}', '200')).toEqual({ $ref: '#/components/schemas/Product' });
    expect(schemaOf('/products/{id}', '404')).toEqual({ $ref: '#/components/schemas/Error' });
    expect(schemaOf('/products/by-slug/{slug}', '401')).toEqual({ $ref: '#/components/schemas/Error' });
    const schemas = doc.components.schemas as Record<string, { required?: string[] }>;
    expect(schemas.Product?.required).toContain('updated_at');
    expect(schemas.ProductListItem?.required).not.toContain('updated_at');
  });

  it('describes the list filters as optional query parameters', () => {
    expect(op('/products').parameters).toEqual([
      expect.objectContaining({ name: 'type', in: 'query', required: false }),
      expect.objectContaining({ name: 'status', in: 'query', required: false }),
    ]);
  });
});
