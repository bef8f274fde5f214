import { PUBLIC_ROUTES } from './public-routes';
import { RouteTable } from './route-table';

const routes = [
  { method: 'get', path: '/v1/customers/entitlements', name: 'entitlements' },
  { method: 'get', path: '/v1/customers/:id', name: 'customer' },
  { method: 'patch', path: '/v1/customers/:id', name: 'update customer' },
  { method: 'get', path: '/v1/customers/:id/balance', name: 'balance' },
  { method: 'post', path: '/v1/products', name: 'create product' },
];

describe('RouteTable', () => {
  const table = new RouteTable(routes);
  const found = (method: string, path: string) => table.find(method, path)?.name;

  it('finds the route of a method and a path, a parameter standing for one segment', () => {
    expect(found('GET', '/v1/customers/cus_1')).toBe('customer');
    expect(found('PATCH', '/v1/customers/cus_1')).toBe('update customer');
    expect(found('GET', '/v1/customers/cus_1/balance')).toBe('balance');
    expect(found('POST', '/v1/products')).toBe('create product');
  });

  it('takes the route listed first when two patterns match', () => {
    expect(found('GET', '/v1/customers/entitlements')).toBe('entitlements');
  });

  it('matches as express does: any case, one trailing slash, HEAD as GET', () => {
    expect(found('GET', '/V1/Customers/cus_1/')).toBe('customer');
    expect(found('HEAD', '/v1/customers/cus_1')).toBe('customer');
  });

  it('finds nothing for another method, an empty segment, or more or fewer segments', () => {
    expect(found('DELETE', '/v1/customers/cus_1')).toBeUndefined();
    expect(found('GET', '/v1/customers//balance')).toBeUndefined();
    expect(found('GET', '/v1/customers')).toBeUndefined();
    expect(found('GET', '/v1/customers/cus_1/balance/more')).toBeUndefined();
    expect(found('GET', '/v1/products')).toBeUndefined();
  });

  it('lists every route whose pattern matches a path, whatever the method, in order', () => {
    expect(table.matching('/v1/customers/entitlements').map((route) => route.name)).toEqual([
      'entitlements',
      'customer',
      'update customer',
    ]);
    expect(table.matching('/v1/nothing')).toEqual([]);
  });

  it('finds each of the public routes by its own pattern', () => {
    const publicRoutes = new RouteTable(PUBLIC_ROUTES);
    for (const route of PUBLIC_ROUTES) {
      const path = route.path.replace(/:\w+/g, 'id_1');
      const match = publicRoutes.find(route.method.toUpperCase(), path);
      expect(match && `${match.method} ${match.path}`).toBe(`${route.method} ${route.path}`);
    }
  });
});
