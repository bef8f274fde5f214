import { type CreditSource, newId } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { creditsAggregate } from './aggregate';
import type { CreditsCommand, LedgerSettings } from './decide';
import { ledgerSettingsOf } from './ledger-settings';

/** A grant that billing makes itself (a purchase, a plan's allowance): once per key. */
export interface SystemGrant {
  amount: number;
  source: CreditSource;
  sourceId: string;
  expiresAt: Date | null;
  idempotencyKey: string;
}

/**
 * Runs a ledger command of billing's own in the caller's transaction, at `now` (the customer's
 * time), with the organization's ledger settings: the events it appended.
 */
export async function ledgerCommandInTransaction(
  tx: EventStoreTransaction,
  store: EventStore,
  tenant: Tenant,
  now: Date,
  command: (settings: LedgerSettings) => CreditsCommand,
) {
  const settings = await ledgerSettingsOf(store, tenant, tx);
  const ledgerCommand = command(settings);
  const { events } = await creditsAggregate.handleInTransaction(
    tx,
    store,
    ledgerCommand.data.customerId,
    ledgerCommand,
    {
      ...tenant,
      occurredAt: now,
    },
  );
  return events;
}

/**
 * Ends the grant billing made with `idempotencyKey` at `now`, in the caller's transaction: what
 * is left of it expires. Nothing when no such grant is open.
 */
export async function endGrantInTransaction(
  tx: EventStoreTransaction,
  store: EventStore,
  tenant: Tenant,
  customerId: string,
  idempotencyKey: string,
  now: Date,
): Promise<void> {
  await ledgerCommandInTransaction(tx, store, tenant, now, (settings) => ({
    type: 'EndGrant',
    data: { customerId, now, idempotencyKey, ...settings },
  }));
}

/** Grants credits to a customer in the caller's transaction, at `now` (the customer's time). */
export async function grantInTransaction(
  tx: EventStoreTransaction,
  store: EventStore,
  tenant: Tenant,
  customerId: string,
  grant: SystemGrant,
  now: Date,
): Promise<void> {
  await ledgerCommandInTransaction(tx, store, tenant, now, (settings) => ({
    type: 'GrantCredits',
    data: { customerId, now, grantId: newId('creditGrant'), reason: null, priority: 0, ...grant, ...settings },
  }));
}
