import {
  type Customer,
  type Environment,
  type SavedPaymentMethod,
  type UpdateCustomerBody,
  customerError,
  livemodeOf,
} from '@billing/contracts';
import type { CustomerEvent, CustomerState, CustomerUpdated } from './customer';

type Who = { customerId: string; organization: string; environment: Environment; now: Date };

/**
 * `externalIdTakenBy`: the customer that holds the external id in the tenant now (looked up
 * by the caller in the read model), or null. A unique index backs the check against races.
 */
export type CreateCustomer = {
  type: 'CreateCustomer';
  data: Who & {
    email: string;
    name: string | null;
    externalId: string | null;
    externalIdTakenBy: string | null;
    /** Sandbox: the test clock of the checkout session that made the customer. */
    testClock?: string | null;
  };
};

/** The merchant's PATCH: `name`, `external_id` (null unlinks), `metadata`. */
export type UpdateCustomer = {
  type: 'UpdateCustomer';
  data: Who & { changes: UpdateCustomerBody; externalIdTakenBy: string | null };
};

/** A paid checkout names an external id: applied only if the customer has none and nobody holds it. */
export type LinkExternalId = {
  type: 'LinkExternalId';
  data: Who & { externalId: string; externalIdTakenBy: string | null };
};

/** A completed checkout session of the customer; counts once per order. */
export type RecordOrder = {
  type: 'RecordOrder';
  data: Who & { orderId: string; checkoutSessionId: string };
};

/** A paid checkout saved the buyer's card: it becomes the one renewals charge. */
export type SavePaymentMethod = { type: 'SavePaymentMethod'; data: Who & { paymentMethod: SavedPaymentMethod } };

export type CustomerCommand = CreateCustomer | UpdateCustomer | LinkExternalId | RecordOrder | SavePaymentMethod;

export function decide(command: CustomerCommand, state: CustomerState): CustomerEvent[] {
  switch (command.type) {
    case 'CreateCustomer':
      return create(command, state);
    case 'UpdateCustomer':
      return update(command, state);
    case 'LinkExternalId':
      return link(command, state);
    case 'RecordOrder':
      return recordOrder(command, state);
    case 'SavePaymentMethod': {
      const { data } = command;
      const current = existing(state, data);
      if (current.paymentMethod?.id === data.paymentMethod.id) return [];
      return [
        {
          type: 'CustomerPaymentMethodSaved',
          data: { customer_id: data.customerId, payment_method: data.paymentMethod, saved_at: data.now.toISOString() },
        },
      ];
    }
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

function create({ data }: CreateCustomer, state: CustomerState): CustomerEvent[] {
  if (state.status !== 'Empty') throw customerError('conflict', `Customer ${data.customerId} already exists`);
  const at = data.now.toISOString();
  const externalId = data.externalId !== null && data.externalIdTakenBy === null ? data.externalId : null;
  const customer: Customer = {
    object: 'customer',
    id: data.customerId,
    email: data.email,
    name: data.name,
    external_id: externalId,
    email_verified: false,
    status: 'ACTIVE',
    metadata: null,
    test_clock: data.testClock ?? null,
    created_at: at,
    updated_at: at,
    livemode: livemodeOf(data.environment),
  };
  return [
    {
      type: 'CustomerCreated',
      data: {
        customer_id: data.customerId,
        organization: data.organization,
        environment: data.environment,
        object: customer,
      },
    },
  ];
}

function update({ data }: UpdateCustomer, state: CustomerState): CustomerEvent[] {
  const { customer } = existing(state, data);
  const changes: CustomerUpdated['data']['changes'] = {};
  const wanted = data.changes;
  if (wanted.name !== undefined && wanted.name !== customer.name) changes.name = wanted.name;
  if (wanted.external_id !== undefined && wanted.external_id !== customer.external_id) {
    if (wanted.external_id !== null && data.externalIdTakenBy !== null && data.externalIdTakenBy !== customer.id) {
      throw customerError('conflict', `external_id ${wanted.external_id} is already used by another customer`);
    }
    changes.external_id = wanted.external_id;
  }
  if (wanted.metadata !== undefined && JSON.stringify(wanted.metadata) !== JSON.stringify(customer.metadata)) {
    changes.metadata = wanted.metadata;
  }
  return changed(customer, changes, data.now);
}

function link({ data }: LinkExternalId, state: CustomerState): CustomerEvent[] {
  const { customer } = existing(state, data);
  if (customer.external_id !== null || data.externalIdTakenBy !== null) return [];
  return changed(customer, { external_id: data.externalId }, data.now);
}

function recordOrder({ data }: RecordOrder, state: CustomerState): CustomerEvent[] {
  const current = existing(state, data);
  if (current.orderIds.includes(data.orderId)) return [];
  return [
    {
      type: 'CustomerOrderRecorded',
      data: {
        customer_id: data.customerId,
        order_id: data.orderId,
        checkout_session_id: data.checkoutSessionId,
        recorded_at: data.now.toISOString(),
      },
    },
  ];
}

function changed(customer: Customer, changes: CustomerUpdated['data']['changes'], now: Date): CustomerEvent[] {
  if (Object.keys(changes).length === 0) return [];
  return [
    {
      type: 'CustomerUpdated',
      data: {
        customer_id: customer.id,
        changes,
        object: { ...customer, ...changes, updated_at: now.toISOString() },
      },
    },
  ];
}

/** Another organization's or environment's customer is absent to the caller. */
function existing(state: CustomerState, who: Who) {
  if (state.status === 'Empty' || state.organization !== who.organization || state.environment !== who.environment) {
    throw customerError('resource_not_found', `No such customer: ${who.customerId}`);
  }
  return state;
}
