import { RoutePath, pathOfTarget, pathSegmentsOf } from './route-path';

describe('RoutePath', () => {
  const route = new RoutePath('/v1/customers/:id/credits/spend');
  const params = (path: string) => route.paramsOf(pathSegmentsOf(path));

  it('gives the parameters as they came, literals matched in any case, one trailing slash allowed', () => {
    expect(params('/v1/customers/Cus_AbC/credits/spend')).toEqual({ id: 'Cus_AbC' });
    expect(params('/V1/Customers/cus_1/CREDITS/spend/')).toEqual({ id: 'cus_1' });
    expect(params('/v1/customers/cus_%C3%A9/credits/spend')).toEqual({ id: 'cus_%C3%A9' });
  });

  it('matches nothing with an empty parameter, another literal, or more or fewer segments', () => {
    expect(params('/v1/customers//credits/spend')).toBeUndefined();
    expect(params('/v1/customers/cus_1/credits/grants')).toBeUndefined();
    expect(params('/v1/customers/cus_1/credits')).toBeUndefined();
    expect(params('/v1/customers/cus_1/credits/spend/more')).toBeUndefined();
    expect(params('/v1/customers/cus_1/credits/spend//')).toBeUndefined();
  });

  it('matches a lowercased path as the route table splits it, once for many routes', () => {
    expect(route.matchesLowercased(pathSegmentsOf('/v1/customers/cus_1/credits/spend'))).toBe(true);
    expect(route.matchesLowercased(pathSegmentsOf('/v1/customers/cus_1/credits'))).toBe(false);
  });

  it('reads the path of a request target as the text before its query', () => {
    expect(pathOfTarget('/v1/products?limit=5')).toBe('/v1/products');
    expect(pathOfTarget('/v1/products')).toBe('/v1/products');
  });
});
