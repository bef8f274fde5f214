import { type CustomerBalanceChangedData, type Environment, type InvoiceLine } from '@billing/contracts';
import {
  type EventStore,
  type EventStoreTransaction,
  type RecordedEvent,
  type SqlExecutor,
  handleCommandInTransaction,
} from '@billing/eventstore';
import type { Tenant } from '@billing/service';

// A customer's balance (docs/plan-switching.md, "Customer balance"): positive is credit the
// customer has (a switch whose credit was more than its charge), taken off the next invoices;
// negative is owed (an upgrade billed at the next renewal), added to the next invoice. Stream
// `customer_balance-<customer id>`; every change is keyed, so it is made once.

export const customerBalanceStream = (customerId: string) => `customer_balance-${customerId}`;
export const balancesTable = (schema: string) => `${schema}.customer_balances`;

type BalanceEvent = { type: 'CustomerBalanceChanged'; data: CustomerBalanceChangedData };
type BalanceState = { balance: number; keys: string[] };

export type ChangeBalance = {
  type: 'ChangeBalance';
  /** `key` makes the change once: a key seen already changes nothing. */
  data: Omit<CustomerBalanceChangedData, 'balance' | 'at' | 'organization' | 'environment'> & {
    organization: string;
    environment: Environment;
    now: Date;
  };
};

const initialState = (): BalanceState => ({ balance: 0, keys: [] });

function evolve(state: BalanceState, event: RecordedEvent): BalanceState {
  if (event.type !== 'CustomerBalanceChanged') return state;
  const data = event.data as CustomerBalanceChangedData;
  return { balance: data.balance, keys: [...state.keys, data.key] };
}

function decide(command: ChangeBalance, state: BalanceState): BalanceEvent[] {
  const { data } = command;
  if (data.amount === 0 || state.keys.includes(data.key)) return [];
  const { now, ...rest } = data;
  return [
    { type: 'CustomerBalanceChanged', data: { ...rest, balance: state.balance + data.amount, at: now.toISOString() } },
  ];
}

export const balanceAggregate = { initialState, evolve, decide };

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

async function projectBalances(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const event of events) {
    if (event.type !== 'CustomerBalanceChanged') continue;
    const data = event.data as CustomerBalanceChangedData;
    await sql.query(
      `INSERT INTO ${balancesTable(schema)} (customer_id, organization, environment, balance, stream_version)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (customer_id) DO UPDATE SET balance = EXCLUDED.balance, stream_version = EXCLUDED.stream_version
       WHERE ${balancesTable(schema)}.stream_version < EXCLUDED.stream_version`,
      [data.customer_id, event.organization, event.environment, data.balance, event.stream_version],
    );
  }
}

/** Changes the balance in the caller's transaction (once per `key`). */
export async function changeBalance(
  tx: EventStoreTransaction,
  store: EventStore,
  command: ChangeBalance,
): Promise<void> {
  const { data } = command;
  await handleCommandInTransaction(tx, store, customerBalanceStream(data.customer_id), balanceAggregate, command, {
    organization: data.organization,
    environment: data.environment,
    occurredAt: data.now,
    project: (inner, events) => projectBalances(inner, store.tables.schema, events),
  });
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

/**
 * In the transaction that opens a renewal invoice (engine/renewals/): locks the customer's
 * balance row, and answers the invoice's balance line and records the change, keyed by the
 * invoice (so a second opener of the same invoice changes nothing). Null when the balance is 0.
 */
export async function takeBalanceForInvoice(
  tx: EventStoreTransaction,
  store: EventStore,
  tenant: Tenant,
  input: {
    customerId: string;
    subscriptionId: string;
    invoiceId: string;
    amount: number;
    period: { start: string; end: string };
    now: Date;
  },
): Promise<InvoiceLine | null> {
  const { schema } = store.tables;
  const { rows } = await tx.query<{ balance: number }>(
    `SELECT balance FROM ${balancesTable(schema)} WHERE customer_id = $1 AND organization = $2 AND environment = $3 FOR UPDATE`,
    [input.customerId, tenant.organization, tenant.environment],
  );
  const balance = rows[0]?.balance ?? 0;
  const taken = balanceLine(balance, input.amount, input.period);
  if (!taken) return null;
  await changeBalance(tx, store, {
    type: 'ChangeBalance',
    data: {
      customer_id: input.customerId,
      ...tenant,
      amount: taken.change,
      reason: 'applied_to_invoice',
      subscription_id: input.subscriptionId,
      invoice_id: input.invoiceId,
      key: `invoice:${input.invoiceId}`,
      now: input.now,
    },
  });
  return taken.line;
}
