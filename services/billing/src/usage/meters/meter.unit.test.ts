import type { Meter } from '@billing/contracts';
import { type MeterState, decide, evolve, initialState, meterOf } from './meter';

const tenant = { organization: 'org_1', environment: 'SANDBOX' as const };
const created: Meter = {
  object: 'meter',
  id: 'mtr_1',
  key: 'calls',
  name: 'Calls',
  aggregation: 'sum',
  credits_per_unit: null,
  status: 'active',
  created_at: '2026-11-01T00:00:00.000Z',
  updated_at: '2026-11-01T00:00:00.000Z',
  livemode: false,
};
const existing: MeterState = { status: 'Existing', meter: created };
const now = new Date('2026-11-02T00:00:00.000Z');
const change = (what: { name: string } | { status: Meter['status'] }) =>
  decide({ type: 'ChangeMeter', data: { ...tenant, meterId: 'mtr_1', change: what, now } }, existing);

describe('a meter', () => {
  it('given none, when created, then it exists; created again, it is a conflict', () => {
    const events = decide({ type: 'CreateMeter', data: { ...tenant, meter: created } }, initialState());
    expect(events).toEqual([{ type: 'MeterCreated', data: { ...tenant, object: created } }]);
    const state = events.reduce(evolve, initialState());
    expect(() => decide({ type: 'CreateMeter', data: { ...tenant, meter: created } }, state)).toThrow('already exists');
  });

  it('given one, when renamed or deactivated, then that changes and its time; nothing else', () => {
    expect(change({ name: 'API calls' })).toEqual([
      {
        type: 'MeterUpdated',
        data: { ...tenant, object: { ...created, name: 'API calls', updated_at: now.toISOString() } },
      },
    ]);
    const [deactivated] = change({ status: 'inactive' });
    expect(deactivated!.data.object).toEqual({ ...created, status: 'inactive', updated_at: now.toISOString() });
  });

  it('given one, when changed to what it is, then nothing is recorded; given none, it is not found', () => {
    expect(change({ name: 'Calls' })).toEqual([]);
    expect(change({ status: 'active' })).toEqual([]);
    expect(() =>
      decide(
        { type: 'ChangeMeter', data: { ...tenant, meterId: 'mtr_2', change: { name: 'x' }, now } },
        initialState(),
      ),
    ).toThrow('No such meter');
  });

  it('stored before it had a status, reads as active and last changed when created', () => {
    const { status: _s, updated_at: _u, ...old } = created;
    expect(meterOf(old)).toEqual(created);
  });
});
