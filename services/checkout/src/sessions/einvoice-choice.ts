import type { Einvoice } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { type KnownSession, runSessionCommands } from './command';
import type { Session } from './session';

type LoadedSession = KnownSession & { session: Session };

/**
 * Records the buyer's e-invoice choice on the session before it is charged, so that
 * `checkout.completed` carries it; answers the session as it then is, for the payment's commands.
 */
export async function chooseEinvoice(
  context: ServiceContext,
  row: LoadedSession,
  einvoice: Einvoice,
): Promise<LoadedSession> {
  const { session } = row;
  const now = context.now();
  const { known } = await runSessionCommands(
    context,
    session.id,
    row,
    [{ type: 'ChooseEinvoice', data: { einvoice, now } }],
    {
      organization: session.organization,
      environment: session.environment,
      occurredAt: now,
    },
  );
  return known?.session ? { session: known.session, version: known.version } : row;
}
