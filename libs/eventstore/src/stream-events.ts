import type { NewEvent, RecordedEvent } from './types';

/**
 * Every type of an aggregate's event union, each named once. A record rather than a list, so
 * that an event added to the union and left out here fails to compile.
 */
export type EventTypeSet<Event extends NewEvent> = { readonly [Type in Event['type']]: true };

/**
 * The events of one kind of stream: their types, and a recorded event read as one of them. The
 * one place where a stored event becomes a domain event, for the aggregate and its read models.
 */
export interface StreamEvents<Event extends NewEvent> {
  readonly types: ReadonlyArray<Event['type']>;
  /** Whether an event (recorded or not) has one of these types. */
  has(event: { type: string }): event is Event;
  /**
   * The recorded event as one of these, or undefined when its type is none of them. Only the
   * type is checked: the store upcasts older shapes as it reads, so the data has the current one.
   */
  of(recorded: Pick<RecordedEvent, 'type' | 'data'>): Event | undefined;
}

/**
 * Declares the events of a stream, e.g.
 * `streamEvents<CouponEvent>({ CouponCreated: true, CouponUpdated: true })`.
 */
export function streamEvents<Event extends NewEvent>(types: EventTypeSet<Event>): StreamEvents<Event> {
  const list = Object.keys(types) as Array<Event['type']>;
  const known = new Set<string>(list);
  return {
    types: list,
    has: (event): event is Event => known.has(event.type),
    of: (recorded) => (known.has(recorded.type) ? ({ type: recorded.type, data: recorded.data } as Event) : undefined),
  };
}
