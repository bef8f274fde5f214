import { type Meter, type Tenant, conflict } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

// A meter (docs/usage.md): what usage events are reported to. Made once; its key, aggregation
// and credits per unit never change, so that a period's usage means one thing throughout.

export const meterStream = (meterId: string) => `meter-${meterId}`;

export type MeterCreated = { type: 'MeterCreated'; data: Tenant & { object: Meter } };
export type MeterEvent = MeterCreated;

export const meterEvents = streamEvents<MeterEvent>({ MeterCreated: true });

export type MeterState = { status: 'Empty' } | { status: 'Existing'; meter: Meter };

export const initialState = (): MeterState => ({ status: 'Empty' });

export function evolve(_state: MeterState, event: MeterEvent): MeterState {
  return { status: 'Existing', meter: event.data.object };
}

export type CreateMeter = { type: 'CreateMeter'; data: Tenant & { meter: Meter } };
export type MeterCommand = CreateMeter;

export function decide(command: MeterCommand, state: MeterState): MeterEvent[] {
  const { meter, organization, environment } = command.data;
  if (state.status !== 'Empty') throw conflict(`Meter ${meter.id} already exists`);
  return [{ type: 'MeterCreated', data: { organization, environment, object: meter } }];
}
