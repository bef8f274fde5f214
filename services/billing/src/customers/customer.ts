import type {
  Customer,
  CustomerCreatedData,
  CustomerOrderRecordedData,
  CustomerPaymentMethodSavedData,
  CustomerUpdatedData,
  Environment,
  SavedPaymentMethod,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const customerStream = (customerId: string) => `customer-${customerId}`;

export type CustomerCreated = { type: 'CustomerCreated'; data: CustomerCreatedData };
export type CustomerUpdated = { type: 'CustomerUpdated'; data: CustomerUpdatedData };
export type CustomerOrderRecorded = { type: 'CustomerOrderRecorded'; data: CustomerOrderRecordedData };
export type CustomerPaymentMethodSaved = { type: 'CustomerPaymentMethodSaved'; data: CustomerPaymentMethodSavedData };
export type CustomerEvent = CustomerCreated | CustomerUpdated | CustomerOrderRecorded | CustomerPaymentMethodSaved;

export const customerEvents = streamEvents<CustomerEvent>({
  CustomerCreated: true,
  CustomerUpdated: true,
  CustomerOrderRecorded: true,
  CustomerPaymentMethodSaved: true,
});

export type CustomerState =
  | { status: 'Empty' }
  | {
      status: 'Existing';
      organization: string;
      environment: Environment;
      /** The customer as the API shows it; every public event carries it whole. */
      customer: Customer;
      orderIds: string[];
      /** The card renewals charge; not part of the customer resource. */
      paymentMethod: SavedPaymentMethod | null;
    };

/**
 * Version of this module's `evolve` and state shape for snapshots (docs/decisions/0010-snapshots.md):
 * bump it whenever either changes, so snapshots folded by the old `evolve` are ignored. The state
 * must stay plain JSON (strings, finite numbers, booleans, null, arrays, plain objects).
 */
export const CUSTOMER_SNAPSHOT_VERSION = 1;

export const initialState = (): CustomerState => ({ status: 'Empty' });

export function evolve(state: CustomerState, event: CustomerEvent): CustomerState {
  switch (event.type) {
    case 'CustomerCreated': {
      const { organization, environment, object } = event.data;
      return { status: 'Existing', organization, environment, customer: object, orderIds: [], paymentMethod: null };
    }
    case 'CustomerUpdated':
      if (state.status === 'Empty') return state;
      return { ...state, customer: event.data.object };
    case 'CustomerOrderRecorded':
      if (state.status === 'Empty') return state;
      return { ...state, orderIds: [...state.orderIds, event.data.order_id] };
    case 'CustomerPaymentMethodSaved':
      if (state.status === 'Empty') return state;
      return { ...state, paymentMethod: event.data.payment_method };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}
