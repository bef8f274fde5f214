import { type CreditSource, newId } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { creditsAggregate } from './aggregate';
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
  await creditsAggregate.handleInTransaction(
    tx,
    store,
    customerId,
    { type: 'EndGrant', data: { customerId, now, idempotencyKey, ...(await ledgerSettingsOf(store, tenant, tx)) } },
    { ...tenant, occurredAt: now },
  );
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
  await creditsAggregate.handleInTransaction(
    tx,
    store,
    customerId,
    {
      type: 'GrantCredits',
      data: {
        customerId,
        now,
        grantId: newId('creditGrant'),
        reason: null,
        priority: 0,
        ...grant,
        ...(await ledgerSettingsOf(store, tenant, tx)),
      },
    },
    { ...tenant, occurredAt: now },
  );
}
