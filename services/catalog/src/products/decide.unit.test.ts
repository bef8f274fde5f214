import { ApiError, type ProductFields } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { productAggregate } from './aggregate';
import type { CreateProduct, ProductChanges, UpdateProduct } from './decide';
import type { ProductEvent } from './product';

const spec = deciderSpec(productAggregate);
const productId = 'prod_1';
const organization = 'org_1';
const createdAt = new Date('2026-01-01T00:00:00.000Z');
const later = new Date('2026-01-02T00:00:00.000Z');

const monthly: ProductFields = {
  name: 'Pro',
  slug: 'pro',
  description: null,
  type: 'SUBSCRIPTION',
  interval: 'month',
  interval_count: 1,
  price: 299,
  currency: 'TWD',
  trial_days: 7,
  display_order: null,
  metadata: { tier: 'pro' },
};
const ebook: ProductFields = {
  ...monthly,
  name: 'E-book',
  slug: 'ebook',
  type: 'ONE_TIME',
  interval: null,
  trial_days: null,
};

const create = (fields: Partial<ProductFields> = {}): CreateProduct => ({
  type: 'CreateProduct',
  data: { productId, organization, environment: 'SANDBOX', fields: { ...monthly, ...fields }, now: createdAt },
});
const update = (changes: ProductChanges, by = organization): UpdateProduct => ({
  type: 'UpdateProduct',
  data: { productId, organization: by, changes, now: later },
});
const created = (fields: ProductFields = monthly): ProductEvent => ({
  type: 'ProductCreated',
  data: {
    product_id: productId,
    organization,
    environment: 'SANDBOX',
    ...fields,
    created_at: createdAt.toISOString(),
  },
});
const archived: ProductEvent = {
  type: 'ProductArchived',
  data: { product_id: productId, archived_at: '2026-01-01T12:00:00.000Z' },
};
const updated = (changes: Partial<ProductFields>): ProductEvent => ({
  type: 'ProductUpdated',
  data: { product_id: productId, changes, updated_at: later.toISOString() },
});

/** The 422 details of a rejected command, as `path: code`. */
function violations(command: CreateProduct | UpdateProduct, given: ProductEvent[] = []): string[] {
  try {
    productAggregate.decide(command, given.reduce(productAggregate.evolve, productAggregate.initialState()));
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('validation_error');
    return ((error as ApiError).details as Array<{ path: string; code: string }>).map((d) => `${d.path}: ${d.code}`);
  }
  throw new Error('expected the command to be rejected');
}

describe('Product', () => {
  describe('when it does not exist', () => {
    it('is created with every field, at the time the command brings', () => {
      spec.given([]).when(create()).then([created()]);
    });

    it('is created as a one-time item without interval or trial', () => {
      spec
        .given([])
        .when(create(ebook))
        .then([created(ebook)]);
    });

    it('cannot be updated: it is not found', () => {
      spec
        .given([])
        .when(update({ price: 1 }))
        .thenThrows(/No such product/);
    });

    describe('rejects fields that break a rule', () => {
      it.each<[string, Partial<ProductFields>, string]>([
        ['an empty name', { name: '' }, 'name: too_small'],
        ['a blank name', { name: '   ' }, 'name: invalid_format'],
        ['a name over 255 characters', { name: 'x'.repeat(256) }, 'name: too_big'],
        ['a slug with capitals', { slug: 'Pro' }, 'slug: invalid_format'],
        ['a slug with an underscore', { slug: 'pro_plan' }, 'slug: invalid_format'],
        ['a slug starting with a hyphen', { slug: '-pro' }, 'slug: invalid_format'],
        ['a slug ending with a hyphen', { slug: 'pro-' }, 'slug: invalid_format'],
        ['an empty slug', { slug: '' }, 'slug: too_small'],
        ['a slug over 100 characters', { slug: 'a'.repeat(101) }, 'slug: too_big'],
        ['a description over 5000 characters', { description: 'x'.repeat(5001) }, 'description: too_big'],
        ['a negative price', { price: -1 }, 'price: too_small'],
        ['a fractional price', { price: 9.5 }, 'price: invalid_type'],
        ['another currency', { currency: 'USD' as 'TWD' }, 'currency: invalid_value'],
        ['an interval count of 0', { interval_count: 0 }, 'interval_count: too_small'],
        ['a trial of 0 days', { trial_days: 0 }, 'trial_days: too_small'],
        ['a fractional display order', { display_order: 1.5 }, 'display_order: invalid_type'],
        ['a subscription without interval', { interval: null }, 'interval: invalid_type'],
        ['a one-time item with an interval', { ...ebook, interval: 'month' }, 'interval: invalid_value'],
        [
          'credits billed every 3 units',
          { ...ebook, type: 'CREDITS', interval_count: 3 },
          'interval_count: invalid_value',
        ],
        ['a donation with a trial', { ...ebook, type: 'DONATION', trial_days: 14 }, 'trial_days: invalid_value'],
      ])('%s', (_case, fields, violation) => {
        expect(violations(create(fields))).toEqual([violation]);
      });

      it('metadata with more than 50 keys, long keys, long or non-string values', () => {
        const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
        expect(violations(create({ metadata: many }))).toEqual(['metadata: too_big']);
        expect(violations(create({ metadata: { ['k'.repeat(41)]: 'v' } }))).toEqual([
          `metadata.${'k'.repeat(41)}: invalid_key`,
        ]);
        expect(violations(create({ metadata: { note: 'x'.repeat(501) } }))).toEqual(['metadata.note: too_big']);
        expect(violations(create({ metadata: { count: 3 as unknown as string } }))).toEqual([
          'metadata.count: invalid_type',
        ]);
      });

      it('accepts the edges: 50 keys of 40 characters, 500-character values, a 100-character slug', () => {
        const metadata = Object.fromEntries(
          Array.from({ length: 50 }, (_, i) => [`${i}`.padEnd(40, 'k'), 'v'.repeat(500)]),
        );
        const fields = { ...monthly, metadata, slug: 'a'.repeat(100), price: 0 };
        spec
          .given([])
          .when(create(fields))
          .then([created(fields)]);
      });
    });
  });

  describe('when it exists', () => {
    it('cannot be created again', () => {
      spec
        .given([created()])
        .when(create())
        .thenThrows(/already exists/);
    });

    it('is not found by another organization', () => {
      spec
        .given([created()])
        .when(update({ price: 1 }, 'org_2'))
        .thenThrows(/No such product/);
    });

    it('records only the fields that change', () => {
      spec
        .given([created()])
        .when(update({ name: 'Pro', price: 399, metadata: { tier: 'pro' }, description: 'Monthly plan' }))
        .then([updated({ price: 399, description: 'Monthly plan' })]);
    });

    it('records nothing when nothing changes, or when nothing is asked', () => {
      spec
        .given([created()])
        .when(update({ price: 299, metadata: { tier: 'pro' }, active: true }))
        .then([]);
      spec.given([created()]).when(update({})).then([]);
    });

    it('replaces metadata as a whole and clears nullable fields', () => {
      spec
        .given([created()])
        .when(update({ metadata: { tier: 'max' }, slug: null, trial_days: null }))
        .then([updated({ slug: null, trial_days: null, metadata: { tier: 'max' } })]);
    });

    it('is archived with active: false', () => {
      spec
        .given([created()])
        .when(update({ active: false }))
        .then([{ type: 'ProductArchived', data: { product_id: productId, archived_at: later.toISOString() } }]);
    });

    it('changes and is archived in one command', () => {
      spec
        .given([created()])
        .when(update({ price: 199, active: false }))
        .then([
          updated({ price: 199 }),
          { type: 'ProductArchived', data: { product_id: productId, archived_at: later.toISOString() } },
        ]);
    });

    describe('checks the rules on the product as it would be after the change', () => {
      it('a subscription turned one-time keeps its interval: rejected', () => {
        expect(violations(update({ type: 'ONE_TIME' }), [created({ ...monthly, trial_days: null })])).toEqual([
          'interval: invalid_value',
        ]);
      });

      it('every leftover subscription field is named', () => {
        const quarterly = { ...monthly, interval_count: 3 };
        expect(violations(update({ type: 'CREDITS' }), [created(quarterly)])).toEqual([
          'interval: invalid_value',
          'interval_count: invalid_value',
          'trial_days: invalid_value',
        ]);
      });

      it('a subscription turned one-time with its interval cleared: accepted', () => {
        spec
          .given([created({ ...monthly, trial_days: null })])
          .when(update({ type: 'ONE_TIME', interval: null }))
          .then([updated({ type: 'ONE_TIME', interval: null })]);
      });

      it('a trial on a one-time item, or a subscription losing its interval: rejected', () => {
        expect(violations(update({ trial_days: 3 }), [created(ebook)])).toEqual(['trial_days: invalid_value']);
        expect(violations(update({ interval: null }), [created()])).toEqual(['interval: invalid_type']);
      });
    });
  });

  describe('when archived', () => {
    it('is restored with active: true', () => {
      spec
        .given([created(), archived])
        .when(update({ active: true }))
        .then([{ type: 'ProductRestored', data: { product_id: productId, restored_at: later.toISOString() } }]);
    });

    it('stays archived with active: false, and can still be edited', () => {
      spec
        .given([created(), archived])
        .when(update({ active: false }))
        .then([]);
      spec
        .given([created(), archived])
        .when(update({ price: 1 }))
        .then([updated({ price: 1 })]);
    });
  });

  describe('evolve', () => {
    it('folds creation, changes, archiving and restoring, moving updated_at', () => {
      const restored: ProductEvent = {
        type: 'ProductRestored',
        data: { product_id: productId, restored_at: '2026-01-03T00:00:00.000Z' },
      };
      const states = [created(), updated({ price: 1 }), archived, restored].reduce(
        (acc, event) => [...acc, productAggregate.evolve(acc.at(-1)!, event)],
        [productAggregate.initialState()],
      );
      expect(states.map((state) => state.status)).toEqual(['Empty', 'Active', 'Active', 'Archived', 'Active']);
      const last = states.at(-1)!;
      expect(last.status === 'Active' && last.product).toEqual({
        id: productId,
        organization,
        environment: 'SANDBOX',
        ...monthly,
        price: 1,
        created_at: createdAt.toISOString(),
        updated_at: '2026-01-03T00:00:00.000Z',
      });
    });
  });
});
