import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { eventJsonSchema } from './asyncapi';
import { eventSchemaSnapshotName, publishedEventTypes } from './event-catalog';
import { schemaIncompatibilities } from './schema-compatibility';

const SNAPSHOTS = join(__dirname, '..', '..', '..', '..', 'docs', 'event-schemas');

const Plan = z.object({ id: z.string(), price: z.int() }).meta({ id: 'TestPlan' });
const v1 = z.object({
  subscription_id: z.string(),
  status: z.enum(['active', 'canceled']),
  canceled_at: z.string().nullable(),
  plan: Plan,
  items: z.array(z.object({ amount: z.int() })),
});
const schemaOf = (data: z.ZodType) => eventJsonSchema({ type: 'test.event', schemaVersion: 1, data });
const check = (data: z.ZodType) => schemaIncompatibilities(schemaOf(v1), schemaOf(data));

describe('schemaIncompatibilities', () => {
  it('given a new optional field, when compared, then the change is compatible', () => {
    expect(check(v1.extend({ coupon: z.string().optional() }))).toEqual([]);
  });

  it('given the same schema, when compared, then it is compatible', () => {
    expect(check(v1)).toEqual([]);
  });

  it('given a removed field, when compared, then it names the field', () => {
    expect(check(v1.omit({ canceled_at: true }))).toEqual(['$.data.canceled_at: field removed']);
  });

  it('given a retyped field, when compared, then it names the field and both types', () => {
    expect(check(v1.extend({ subscription_id: z.int() }))).toEqual([
      '$.data.subscription_id: type changed from string to integer',
    ]);
  });

  it('given a retyped field inside a named sub-schema, when compared, then it is found through the $ref', () => {
    const broken = v1.extend({ plan: z.object({ id: z.string(), price: z.string() }).meta({ id: 'TestPlan' }) });
    expect(check(broken)).toEqual(['$.data.plan.price: type changed from integer to string']);
  });

  it('given a field in array items retyped, when compared, then it is incompatible', () => {
    expect(check(v1.extend({ items: z.array(z.object({ amount: z.string() })) }))).toEqual([
      '$.data.items[].amount: type changed from integer to string',
    ]);
  });

  it('given a new required field, when compared, then it is incompatible', () => {
    expect(check(v1.extend({ currency: z.string() }))).toEqual(['$.data.currency: new required field']);
  });

  it('given a nullable field made non-null, or an enum value removed, when compared, then both are incompatible', () => {
    expect(check(v1.extend({ canceled_at: z.string(), status: z.enum(['active']) }))).toEqual([
      '$.data.status: enum value "canceled" removed',
      '$.data.canceled_at: type changed from null|string to string',
    ]);
  });
});

describe('event schemas against their committed snapshots (docs/event-schemas)', () => {
  const events = publishedEventTypes();

  it.each(events.map((e) => [`${e.type} v${e.schemaVersion}`, e] as const))(
    '%s is compatible with its snapshot and the snapshot is current',
    (_name, event) => {
      const file = join(SNAPSHOTS, eventSchemaSnapshotName(event));
      expect(existsSync(file)).toBe(true);
      const snapshot = JSON.parse(readFileSync(file, 'utf8'));
      const current = eventJsonSchema(event);
      // An incompatible change needs a new schema_version (EVENT_SCHEMA_VERSIONS) and a new snapshot.
      expect(schemaIncompatibilities(snapshot, current)).toEqual([]);
      // A compatible one needs `npm run contracts:asyncapi` to refresh the snapshot.
      expect(snapshot).toEqual(JSON.parse(JSON.stringify(current)));
    },
  );
});

describe('the snapshot check on a deliberately broken real event schema', () => {
  const completed = publishedEventTypes().find((e) => e.type === 'checkout.completed')!;
  const snapshot = JSON.parse(readFileSync(join(SNAPSHOTS, eventSchemaSnapshotName(completed)), 'utf8'));
  const data = completed.data as z.ZodObject;

  it('given checkout.completed with amount_total removed and order_id retyped at the same schema_version, when checked against docs/event-schemas, then it fails naming both', () => {
    const broken = data.omit({ amount_total: true }).extend({ order_id: z.int() });
    expect(schemaIncompatibilities(snapshot, eventJsonSchema({ ...completed, data: broken }))).toEqual(
      expect.arrayContaining([
        '$.data.amount_total: field removed',
        '$.data.order_id: type changed from string to integer',
      ]),
    );
  });

  it('given checkout.completed with a new required field, when checked against docs/event-schemas, then it fails', () => {
    const broken = data.extend({ tax_amount: z.int() });
    expect(schemaIncompatibilities(snapshot, eventJsonSchema({ ...completed, data: broken }))).toEqual([
      '$.data.tax_amount: new required field',
    ]);
  });
});
