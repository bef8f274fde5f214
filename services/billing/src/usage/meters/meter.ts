import { type Meter, type Tenant, conflict, notFound } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

// A meter (docs/usage.md): what usage events are reported to. Its key, aggregation and credits
// per unit never change, so that a period's usage means one thing throughout; its name may, and
// it may be deactivated (it takes no events) and reactivated.

export const meterStream = (meterId: string) => `meter-${meterId}`;

export type MeterCreated = { type: 'MeterCreated'; data: Tenant & { object: Meter } };
/** Renamed, deactivated or reactivated: the meter after the change. */
export type MeterUpdated = { type: 'MeterUpdated'; data: Tenant & { object: Meter } };
export type MeterEvent = MeterCreated | MeterUpdated;

export const meterEvents = streamEvents<MeterEvent>({ MeterCreated: true, MeterUpdated: true });

export type MeterState = { status: 'Empty' } | { status: 'Existing'; meter: Meter };

export const initialState = (): MeterState => ({ status: 'Empty' });

export function evolve(_state: MeterState, event: MeterEvent): MeterState {
  return { status: 'Existing', meter: meterOf(event.data.object) };
}

/** A meter as stored before status and updated_at were kept: active, last changed when created. */
export function meterOf(stored: Omit<Meter, 'status' | 'updated_at'> & Partial<Meter>): Meter {
  const { livemode, ...rest } = stored;
  return { ...rest, status: stored.status ?? 'active', updated_at: stored.updated_at ?? stored.created_at, livemode };
}

export type CreateMeter = { type: 'CreateMeter'; data: Tenant & { meter: Meter } };
export type ChangeMeter = {
  type: 'ChangeMeter';
  data: Tenant & { meterId: string; change: { name: string } | { status: Meter['status'] }; now: Date };
};
export type MeterCommand = CreateMeter | ChangeMeter;

export function decide(command: MeterCommand, state: MeterState): MeterEvent[] {
  const { organization, environment } = command.data;
  if (command.type === 'CreateMeter') {
    const { meter } = command.data;
    if (state.status !== 'Empty') throw conflict(`Meter ${meter.id} already exists`);
    return [{ type: 'MeterCreated', data: { organization, environment, object: meter } }];
  }
  const { meterId, change, now } = command.data;
  if (state.status === 'Empty') throw notFound(`No such meter: ${meterId}`);
  const { meter } = state;
  const unchanged = 'name' in change ? meter.name === change.name : meter.status === change.status;
  if (unchanged) return [];
  const object: Meter = { ...meter, ...change, updated_at: now.toISOString() };
  return [{ type: 'MeterUpdated', data: { organization, environment, object } }];
}
