import type { DomainEventEnvelope, Environment } from '@billing/contracts';

/** An event as the domain produces it, before the store gives it a place. */
export interface NewEvent<Data extends Record<string, unknown> = Record<string, unknown>> {
  type: string;
  data: Data;
  /** Version of the shape of `data`; 1 unless the type has been revised. */
  schemaVersion?: number;
  /** Defaults to a fresh UUID; give one to make a retried append recognisable. */
  id?: string;
}

/** Where a subscriber is in the event log: the pair the log is ordered by. */
export interface LogPosition {
  /** PostgreSQL transaction id (xid8) of the append, as text. */
  transactionId: string;
  globalPosition: number;
}

export const START_OF_LOG: LogPosition = { transactionId: '0', globalPosition: 0 };

export type RecordedEvent<Data = Record<string, unknown>> = DomainEventEnvelope<Data> & {
  /** Internal: the transaction that appended it; part of the read order, not published. */
  transaction_id: string;
};

export const positionOf = (event: RecordedEvent): LogPosition => ({
  transactionId: event.transaction_id,
  globalPosition: event.global_position,
});

/** The envelope as published to other services: without the internal transaction id. */
export function toEnvelope({ transaction_id: _internal, ...envelope }: RecordedEvent): DomainEventEnvelope {
  return envelope;
}

export type ExpectedVersion = number | 'any';

export interface AppendOptions {
  /** The stream's version the caller decided on; 0 means the stream must not exist yet. */
  expectedVersion: ExpectedVersion;
  organization: string;
  environment: Environment;
  /** When the events happened, from the injected clock. */
  occurredAt: Date;
}

export interface AppendResult {
  nextExpectedVersion: number;
  events: RecordedEvent[];
}

export class ExpectedVersionConflictError extends Error {
  constructor(
    readonly stream: string,
    readonly expectedVersion: ExpectedVersion,
  ) {
    super(`Stream ${stream} is not at the expected version ${expectedVersion}`);
    this.name = 'ExpectedVersionConflictError';
  }
}

/**
 * `handleCommand` gave up: every one of its attempts met a concurrent writer of the stream
 * (`cause` is the last conflict). Nothing was written; services answer it `409 conflict`, and
 * the request may be sent again.
 */
export class WriteConflictError extends Error {
  constructor(
    readonly stream: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(`Stream ${stream} kept changing under ${attempts} attempts to write it`, options);
    this.name = 'WriteConflictError';
  }
}

/** Turns a stored event of an older shape into the current one; see docs on versioning. */
export type Upcaster = (event: RecordedEvent) => RecordedEvent;
