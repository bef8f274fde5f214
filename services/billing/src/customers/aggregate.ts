import { defineAggregate } from '@billing/eventstore';
import {
  balanceEvents,
  customerBalanceStream,
  decideBalance,
  evolveBalance,
  initialBalance,
  projectBalances,
} from './balance';
import { CUSTOMER_SNAPSHOT_VERSION, customerEvents, customerStream, evolve, initialState } from './customer';
import { decide } from './decide';
import { projectCustomers } from './read-model';

/** The customer aggregate: the decider its tests check, run on `customer-<id>` with the customers table. */
export const customerAggregate = defineAggregate({
  stream: customerStream,
  events: customerEvents,
  initialState,
  evolve,
  decide,
  snapshot: { version: CUSTOMER_SNAPSHOT_VERSION },
  project: projectCustomers,
});

/** A customer's balance, on `customer_balance-<customer id>` with the customer balances table. */
export const customerBalanceAggregate = defineAggregate({
  stream: customerBalanceStream,
  events: balanceEvents,
  initialState: initialBalance,
  evolve: evolveBalance,
  decide: decideBalance,
  project: projectBalances,
});
