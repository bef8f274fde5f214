import type {
  Customer,
  CustomerCreatedData,
  CustomerOrderRecordedData,
  CustomerUpdatedData,
  Environment,
} from '@billing/contracts';
import type { RecordedEvent } from '@billing/eventstore';

export const customerStream = (customerId: string) => `customer-${customerId}`;

export type CustomerCreated = { type: 'CustomerCreated'; data: CustomerCreatedData };
export type CustomerUpdated = { type: 'CustomerUpdated'; data: CustomerUpdatedData };
export type CustomerOrderRecorded = { type: 'CustomerOrderRecorded'; data: CustomerOrderRecordedData };
export type CustomerEvent = CustomerCreated | CustomerUpdated | CustomerOrderRecorded;

export const CUSTOMER_EVENT_TYPES: ReadonlyArray<CustomerEvent['type']> = [
  'CustomerCreated',
  'CustomerUpdated',
  'CustomerOrderRecorded',
];

export type CustomerState =
  | { status: 'Empty' }
  | {
      status: 'Existing';
      organization: string;
      environment: Environment;
      /** The customer as the API shows it; every public event carries it whole. */
      customer: Customer;
      orderIds: string[];
    };

export const initialState = (): CustomerState => ({ status: 'Empty' });

export function evolve(state: CustomerState, event: CustomerEvent): CustomerState {
  switch (event.type) {
    case 'CustomerCreated': {
      const { organization, environment, object } = event.data;
      return { status: 'Existing', organization, environment, customer: object, orderIds: [] };
    }
    case 'CustomerUpdated':
      if (state.status === 'Empty') return state;
      return { ...state, customer: event.data.object };
    case 'CustomerOrderRecorded':
      if (state.status === 'Empty') return state;
      return { ...state, orderIds: [...state.orderIds, event.data.order_id] };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}

export const asCustomerEvent = (event: RecordedEvent): CustomerEvent =>
  ({ type: event.type, data: event.data }) as CustomerEvent;
