import type { CallerIdentity, Product } from '@billing/contracts';
import { ProductCache } from './product-cache';

const caller: CallerIdentity = { organization: 'org_1', environment: 'SANDBOX', keyKind: 'secret', keyId: 'key_1' };
const product = (fields: Partial<Product> = {}) => ({ id: 'prod_1', price: 300, active: true, ...fields }) as Product;

/** A catalog that answers `answer` and counts the calls. */
const catalog = (answer: () => { status: number; body: Product }) => {
  const ask = jest.fn(async () => answer());
  return ask;
};

describe('ProductCache', () => {
  it('answers an active product from memory until any event of it, under its id and its slug', async () => {
    let current = product();
    const ask = catalog(() => ({ status: 200, body: current }));
    const cache = new ProductCache(60_000);
    await cache.lookUp(caller, { product_id: 'prod_1' }, ask);
    await cache.lookUp(caller, { product_slug: 'ebook' }, ask);
    expect((await cache.lookUp(caller, { product_id: 'prod_1' }, ask)).body.price).toBe(300);
    expect((await cache.lookUp(caller, { product_slug: 'ebook' }, ask)).body.price).toBe(300);
    expect(ask).toHaveBeenCalledTimes(2);

    current = product({ price: 400 });
    cache.forget('prod_1');
    expect((await cache.lookUp(caller, { product_id: 'prod_1' }, ask)).body.price).toBe(400);
    expect((await cache.lookUp(caller, { product_slug: 'ebook' }, ask)).body.price).toBe(400);
    expect(ask).toHaveBeenCalledTimes(4);
  });

  it('keeps neither an archived product nor a 404, and nothing of another tenant', async () => {
    const cache = new ProductCache(60_000);
    const archived = catalog(() => ({ status: 200, body: product({ active: false }) }));
    await cache.lookUp(caller, { product_id: 'prod_1' }, archived);
    await cache.lookUp(caller, { product_id: 'prod_1' }, archived);
    expect(archived).toHaveBeenCalledTimes(2);
    const active = catalog(() => ({ status: 200, body: product() }));
    await cache.lookUp(caller, { product_id: 'prod_1' }, active);
    await cache.lookUp({ ...caller, environment: 'PRODUCTION' }, { product_id: 'prod_1' }, active);
    expect(active).toHaveBeenCalledTimes(2);
  });

  it('does not keep an answer asked for before a change arrived', async () => {
    const cache = new ProductCache(60_000);
    const racing = catalog(() => {
      cache.forget('prod_1'); // the archive's event arrives while the old answer is on its way
      return { status: 200, body: product() };
    });
    await cache.lookUp(caller, { product_id: 'prod_1' }, racing);
    const archived = catalog(() => ({ status: 200, body: product({ active: false }) }));
    expect((await cache.lookUp(caller, { product_id: 'prod_1' }, archived)).body.active).toBe(false);
  });

  it('asks again once the time to live passed, whatever the events', async () => {
    let now = 0;
    const cache = new ProductCache(10_000, () => now);
    const ask = catalog(() => ({ status: 200, body: product() }));
    await cache.lookUp(caller, { product_id: 'prod_1' }, ask);
    now = 9_999;
    await cache.lookUp(caller, { product_id: 'prod_1' }, ask);
    expect(ask).toHaveBeenCalledTimes(1);
    now = 10_000;
    await cache.lookUp(caller, { product_id: 'prod_1' }, ask);
    expect(ask).toHaveBeenCalledTimes(2);
  });

  it('asks the catalog once for concurrent lookups of one product, and again after a failure', async () => {
    const cache = new ProductCache(60_000);
    let answerNow: () => void = () => undefined;
    const ask = jest.fn(
      () =>
        new Promise<{ status: number; body: Product }>((resolve) => {
          answerNow = () => resolve({ status: 200, body: product() });
        }),
    );
    const lookups = Array.from({ length: 5 }, () => cache.lookUp(caller, { product_slug: 'ebook' }, ask));
    answerNow();
    expect((await Promise.all(lookups)).map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(ask).toHaveBeenCalledTimes(1);

    const failing = jest.fn(async () => {
      throw new Error('catalog is unavailable');
    });
    const other = { product_slug: 'other' };
    await expect(
      Promise.all([cache.lookUp(caller, other, failing), cache.lookUp(caller, other, failing)]),
    ).rejects.toThrow('catalog is unavailable');
    expect(failing).toHaveBeenCalledTimes(1);
    await expect(cache.lookUp(caller, other, failing)).rejects.toThrow();
    expect(failing).toHaveBeenCalledTimes(2);
  });

  it('does not give a lookup that starts after a change the answer asked for before it', async () => {
    const cache = new ProductCache(60_000);
    let answerOld: () => void = () => undefined;
    const before = cache.lookUp(
      caller,
      { product_id: 'prod_1' },
      () => new Promise((resolve) => (answerOld = () => resolve({ status: 200, body: product() }))),
    );
    cache.forget('prod_1'); // archived while the first answer is on its way
    const after = cache.lookUp(caller, { product_id: 'prod_1' }, async () => ({
      status: 200,
      body: product({ active: false }),
    }));
    answerOld();
    expect((await before).body.active).toBe(true);
    expect((await after).body.active).toBe(false);
  });
});
