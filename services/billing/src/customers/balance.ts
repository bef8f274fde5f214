import { type CustomerBalanceChangedData, type Environment, type InvoiceLine } from '@billing/contracts';
import { type EventStore, type RecordedEvent, type SqlExecutor, streamEvents } from '@billing/eventstore';
import type { Tenant } from '@billing/service';

// A customer's balance (docs/plan-switching.md, "Customer balance"): positive is credit the
// customer has (a switch whose credit was more than its charge), taken off the next invoices;
// negative is owed (an upgrade billed at the next renewal), added to the next invoice. Stream
// `customer_balance-<customer id>`; every change is keyed, so it is made once.

export const customerBalanceStream = (customerId: string) => `customer_balance-${customerId}`;
export const balancesTable = (schema: string) => `${schema}.customer_balances`;

export type BalanceEvent = { type: 'CustomerBalanceChanged'; data: CustomerBalanceChangedData };
export type BalanceState = { balance: number; keys: string[] };

export const balanceEvents = streamEvents<BalanceEvent>({ CustomerBalanceChanged: true });

export type ChangeBalance = {
  type: 'ChangeBalance';
  /** `key` makes the change once: a key seen already changes nothing. */
  data: Omit<CustomerBalanceChangedData, 'balance' | 'at' | 'organization' | 'environment'> & {
    organization: string;
    environment: Environment;
    now: Date;
  };
};

export const initialBalance = (): BalanceState => ({ balance: 0, keys: [] });

export function evolveBalance(state: BalanceState, event: BalanceEvent): BalanceState {
  return { balance: event.data.balance, keys: [...state.keys, event.data.key] };
}

/** `key` makes the change once: a key seen already changes nothing. */
export function decideBalance(command: ChangeBalance, state: BalanceState): BalanceEvent[] {
  const { data } = command;
  if (data.amount === 0 || state.keys.includes(data.key)) return [];
  const { now, ...rest } = data;
  return [
    { type: 'CustomerBalanceChanged', data: { ...rest, balance: state.balance + data.amount, at: now.toISOString() } },
  ];
}

export async function migrateBalancesReadModel(store: EventStore): Promise<void> {
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${balancesTable(store.tables.schema)} (
      customer_id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      balance integer NOT NULL,
      stream_version integer NOT NULL
    );
  `);
}

export async function projectBalances(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const recorded of events) {
    const event = balanceEvents.of(recorded);
    if (!event) continue;
    const { data } = event;
    await sql.query(
      `INSERT INTO ${balancesTable(schema)} (customer_id, organization, environment, balance, stream_version)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (customer_id) DO UPDATE SET balance = EXCLUDED.balance, stream_version = EXCLUDED.stream_version
       WHERE ${balancesTable(schema)}.stream_version < EXCLUDED.stream_version`,
      [data.customer_id, recorded.organization, recorded.environment, data.balance, recorded.stream_version],
    );
  }
}

export async function balanceOf(sql: SqlExecutor, schema: string, tenant: Tenant, customerId: string): Promise<number> {
  const { rows } = await sql.query<{ balance: number }>(
    `SELECT balance FROM ${balancesTable(schema)} WHERE customer_id = $1 AND organization = $2 AND environment = $3`,
    [customerId, tenant.organization, tenant.environment],
  );
  return rows[0]?.balance ?? 0;
}

/**
 * The line a renewal invoice of `amount` (after its coupon) gets from the customer's balance,
 * and the change of the balance, or null when the balance is 0. Credit is taken up to the
 * invoice's amount (the rest stays for later invoices); what is owed is added whole.
 */
export function balanceLine(
  balance: number,
  amount: number,
  period: { start: string; end: string },
): { line: InvoiceLine; change: number } | null {
  if (balance > 0) {
    const applied = Math.min(balance, amount);
    if (applied <= 0) return null;
    return {
      line: { description: 'Credit from the customer balance', amount: -applied, period, kind: 'customer_balance' },
      change: -applied,
    };
  }
  if (balance < 0) {
    return {
      line: {
        description: 'Owed from a plan switch (customer balance)',
        amount: -balance,
        period,
        kind: 'customer_balance',
      },
      change: -balance,
    };
  }
  return null;
}
