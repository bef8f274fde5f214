import { type EventStoreTransaction, type RecordedEvent, isRetryableWriteError } from '@billing/eventstore';
import type { Environment } from '@billing/contracts';
import { type ServiceContext, recordMetricsChanges } from '@billing/runtime';
import { sessionMetricsChange } from './metrics';
import { countLinkCompletions } from '../payment-links/read-model';
import type { SessionCommand } from './decide';
import { writeSessionRow } from './read-model';
import { sessionAggregate } from './aggregate';
import { type Session, type SessionState, sessionStream } from './session';

/**
 * A session as this request already read it: its read-model row (written in the transaction of
 * every append to its stream, so it is the stream folded) at `version`; a new session is
 * `{ session: null, version: 0 }`.
 */
export type KnownSession = { session: Session | null; version: number };

export interface SessionCommandOptions {
  organization: string;
  environment: Environment;
  occurredAt: Date;
  /** Written in the same transaction, after the session's row. */
  alsoProject?: (tx: EventStoreTransaction, events: RecordedEvent[]) => Promise<void>;
}

export interface SessionCommandResult {
  state: SessionState;
  events: RecordedEvent[];
  /** The session as it now is, for the request's next command; null when not known without a read. */
  known: KnownSession | null;
}

const stateOf = (known: KnownSession): SessionState =>
  known.session ? { status: 'Exists', session: known.session } : sessionAggregate.initialState();

/**
 * Runs session commands in one transaction, deciding each on the session as this request knows
 * it instead of reading the stream again, and writes the session's row from the state the events
 * lead to instead of reading it again: the append's expected version (the row's) makes a stale
 * or wrong `known` a version conflict, and then the commands run one by one through
 * `sessionAggregate.handle` from the stream, as without `known`. Without `known` that is all it does.
 */
export async function runSessionCommands(
  context: ServiceContext,
  sessionId: string,
  known: KnownSession | null,
  commands: SessionCommand[],
  options: SessionCommandOptions,
): Promise<SessionCommandResult> {
  if (known) {
    try {
      return await appendFromKnown(context, sessionId, known, commands, options);
    } catch (error) {
      if (!isRetryableWriteError(error)) throw error;
    }
  }
  return fromStream(context, sessionId, commands, options);
}

async function appendFromKnown(
  context: ServiceContext,
  sessionId: string,
  known: KnownSession,
  commands: SessionCommand[],
  { alsoProject, ...appendOptions }: SessionCommandOptions,
): Promise<SessionCommandResult> {
  const { store } = context;
  const { schema } = store.tables;
  // Each command is decided on the state the earlier ones lead to; that fold is also the state
  // after the append, which records these very events.
  let state = stateOf(known);
  const decided = commands.flatMap((command) => {
    const events = sessionAggregate.decide(command, state);
    state = events.reduce(sessionAggregate.evolve, state);
    return events;
  });
  return store.transaction(async (tx) => {
    const { events, nextExpectedVersion } = await tx.append(sessionStream(sessionId), decided, {
      ...appendOptions,
      expectedVersion: known.version,
    });
    if (events.length > 0 && state.status === 'Exists') {
      await writeSessionRow(tx, schema, state.session, nextExpectedVersion);
      await recordMetricsChanges(tx, schema, state.session, sessionMetricsChange(known.session, state.session, events));
      // A session no link opened has no link to count its completion on.
      if (state.session.payment_link_id !== null) await countLinkCompletions(tx, schema, events);
      await alsoProject?.(tx, events);
    }
    const next = state.status === 'Exists' ? { session: state.session, version: nextExpectedVersion } : null;
    return { state, events, known: next };
  });
}

async function fromStream(
  context: ServiceContext,
  sessionId: string,
  commands: SessionCommand[],
  options: SessionCommandOptions,
): Promise<SessionCommandResult> {
  let result: { state: SessionState; events: RecordedEvent[] } = { state: sessionAggregate.initialState(), events: [] };
  const events: RecordedEvent[] = [];
  for (const command of commands) {
    result = await sessionAggregate.handle(context.store, sessionId, command, options);
    events.push(...result.events);
  }
  const last = result.events.at(-1);
  const known =
    last && result.state.status === 'Exists' ? { session: result.state.session, version: last.stream_version } : null;
  return { state: result.state, events, known };
}
