import { ApiError, type Customer } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import type { CustomerEvent } from './customer';
import { customerAggregate } from './aggregate';
import type { CreateCustomer, CustomerCommand } from './decide';

const spec = deciderSpec(customerAggregate);
const at = new Date('2026-01-01T00:00:00.000Z');
const later = new Date('2026-01-02T00:00:00.000Z');
const who = { customerId: 'cus_1', organization: 'org_1', environment: 'SANDBOX' as const };

const customer: Customer = {
  object: 'customer',
  id: 'cus_1',
  email: 'ada@example.com',
  name: 'Ada',
  external_id: null,
  email_verified: false,
  status: 'ACTIVE',
  metadata: null,
  test_clock: null,
  created_at: at.toISOString(),
  updated_at: at.toISOString(),
  livemode: false,
};
const created = (fields: Partial<Customer> = {}): CustomerEvent => ({
  type: 'CustomerCreated',
  data: { customer_id: 'cus_1', organization: 'org_1', environment: 'SANDBOX', object: { ...customer, ...fields } },
});
const create = (fields: Partial<CreateCustomer['data']> = {}): CustomerCommand => ({
  type: 'CreateCustomer',
  data: {
    ...who,
    now: at,
    email: 'ada@example.com',
    name: 'Ada',
    externalId: null,
    externalIdTakenBy: null,
    ...fields,
  },
});
const update = (
  changes: Record<string, unknown>,
  fields: { externalIdTakenBy?: string | null; organization?: string } = {},
): CustomerCommand => ({
  type: 'UpdateCustomer',
  data: { ...who, now: later, changes, externalIdTakenBy: null, ...fields },
});
const updated = (changes: Record<string, unknown>, base: Partial<Customer> = {}): CustomerEvent => ({
  type: 'CustomerUpdated',
  data: {
    customer_id: 'cus_1',
    changes,
    object: { ...customer, ...base, ...changes, updated_at: later.toISOString() },
  },
});

describe('Customer', () => {
  describe('when new', () => {
    it('is created ACTIVE and unverified with the public object', () =>
      spec.given([]).when(create()).then([created()]));
    it('takes a free external id', () =>
      spec
        .given([])
        .when(create({ externalId: 'user_42' }))
        .then([created({ external_id: 'user_42' })]));
    it('is created without an external id another customer holds', () =>
      spec
        .given([])
        .when(create({ externalId: 'user_42', externalIdTakenBy: 'cus_other' }))
        .then([created()]));
    it('is livemode in PRODUCTION', () => {
      const command = create({ environment: 'PRODUCTION' });
      const event = customerAggregate.decide(command, customerAggregate.initialState())[0]!;
      expect(event.type === 'CustomerCreated' && event.data.object.livemode).toBe(true);
    });
    it('cannot be updated', () =>
      spec
        .given([])
        .when(update({ name: 'x' }))
        .thenThrows('No such customer'));
  });

  describe('when it exists', () => {
    it('cannot be created again', () => spec.given([created()]).when(create()).thenThrows(ApiError));
    it('records only the fields that change, with the object after the change', () =>
      spec
        .given([created()])
        .when(update({ name: 'Ada', external_id: 'user_1', metadata: { plan: 'pro' } }))
        .then([updated({ external_id: 'user_1', metadata: { plan: 'pro' } })]));
    it('records nothing for no change', () =>
      spec
        .given([created()])
        .when(update({ name: 'Ada' }))
        .then([]));
    it('refuses an external id another customer holds', () =>
      spec
        .given([created()])
        .when(update({ external_id: 'user_1' }, { externalIdTakenBy: 'cus_2' }))
        .thenThrows('already used'));
    it('keeps its own external id when it is sent again', () =>
      spec
        .given([created({ external_id: 'user_1' })])
        .when(update({ external_id: 'user_1' }, { externalIdTakenBy: 'cus_1' }))
        .then([]));
    it('unlinks with null', () =>
      spec
        .given([created({ external_id: 'user_1' })])
        .when(update({ external_id: null }))
        .then([updated({ external_id: null }, { external_id: 'user_1' })]));
    it('is absent to another organization', () =>
      spec
        .given([created()])
        .when(update({ name: 'x' }, { organization: 'org_2' }))
        .thenThrows('No such customer'));
  });

  describe('when a paid checkout names an external id', () => {
    const link = (externalIdTakenBy: string | null): CustomerCommand => ({
      type: 'LinkExternalId',
      data: { ...who, now: later, externalId: 'user_9', externalIdTakenBy },
    });
    it('links it to a customer without one', () =>
      spec
        .given([created()])
        .when(link(null))
        .then([updated({ external_id: 'user_9' })]));
    it('never replaces the external id a customer has', () =>
      spec
        .given([created({ external_id: 'user_1' })])
        .when(link(null))
        .then([]));
    it('leaves it with the customer that holds it', () => spec.given([created()]).when(link('cus_2')).then([]));
  });

  describe('orders', () => {
    const record = (orderId: string): CustomerCommand => ({
      type: 'RecordOrder',
      data: { ...who, now: later, orderId, checkoutSessionId: `cs_${orderId}` },
    });
    const recorded = (orderId: string): CustomerEvent => ({
      type: 'CustomerOrderRecorded',
      data: {
        customer_id: 'cus_1',
        order_id: orderId,
        checkout_session_id: `cs_${orderId}`,
        recorded_at: later.toISOString(),
      },
    });
    it('counts a new order', () =>
      spec
        .given([created()])
        .when(record('ord_1'))
        .then([recorded('ord_1')]));
    it('counts an order once', () =>
      spec
        .given([created(), recorded('ord_1')])
        .when(record('ord_1'))
        .then([]));
  });
});
