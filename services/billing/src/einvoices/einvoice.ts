import {
  type Einvoice as EinvoiceChoice,
  type EinvoiceAllowance,
  type EinvoiceAllowanceIssuedData,
  type EinvoiceAttemptFailedData,
  type EinvoiceAttemptStartedData,
  type EinvoiceDeadlineApproachingData,
  type EinvoiceIssuedData,
  type EinvoiceRefundRecordedData,
  type EinvoiceRequestedData,
  type EinvoiceResource,
  type EinvoiceTaxType,
  type EinvoiceVoidedData,
  type Environment,
  conflict,
  livemodeOf,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';
import { ATTEMPT_LEASE_MS, deadlineOf, retryDelayMs, splitTax, voidableAt, warnAtOf } from './rules';

/**
 * One e-invoice (電子發票) per paid order or invoice, on `einvoice-<id>`, its id made from the
 * source (`einvoiceIdOf`) so that a paid order asks for one only. What is still to be asked of
 * the provider is `pending_action`: issue, then a void or allowances for refunds, each claimed
 * by one process (`StartAttempt`) before the provider is called.
 */
export const einvoiceStream = (id: string) => `einvoice-${id}`;

export type EinvoiceRequested = { type: 'EinvoiceRequested'; data: EinvoiceRequestedData };
export type EinvoiceAttemptStarted = { type: 'EinvoiceAttemptStarted'; data: EinvoiceAttemptStartedData };
export type EinvoiceIssued = { type: 'EinvoiceIssued'; data: EinvoiceIssuedData };
export type EinvoiceAttemptFailed = { type: 'EinvoiceAttemptFailed'; data: EinvoiceAttemptFailedData };
export type EinvoiceDeadlineApproaching = {
  type: 'EinvoiceDeadlineApproaching';
  data: EinvoiceDeadlineApproachingData;
};
export type EinvoiceRefundRecorded = { type: 'EinvoiceRefundRecorded'; data: EinvoiceRefundRecordedData };
export type EinvoiceVoided = { type: 'EinvoiceVoided'; data: EinvoiceVoidedData };
export type EinvoiceAllowanceIssued = { type: 'EinvoiceAllowanceIssued'; data: EinvoiceAllowanceIssuedData };
export type EinvoiceEvent =
  | EinvoiceRequested
  | EinvoiceAttemptStarted
  | EinvoiceIssued
  | EinvoiceAttemptFailed
  | EinvoiceDeadlineApproaching
  | EinvoiceRefundRecorded
  | EinvoiceVoided
  | EinvoiceAllowanceIssued;

export const einvoiceEvents = streamEvents<EinvoiceEvent>({
  EinvoiceRequested: true,
  EinvoiceAttemptStarted: true,
  EinvoiceIssued: true,
  EinvoiceAttemptFailed: true,
  EinvoiceDeadlineApproaching: true,
  EinvoiceRefundRecorded: true,
  EinvoiceVoided: true,
  EinvoiceAllowanceIssued: true,
});

/** The buyer's email and name, for the provider (member carrier notices); never public. */
export type EinvoiceContact = { email: string | null; name: string | null };

export type EinvoiceState =
  | { status: 'Empty' }
  | {
      status: 'Existing';
      einvoice: EinvoiceResource;
      organization: string;
      environment: Environment;
      contact: EinvoiceContact;
      /** Refunds recorded (their ids), so that a redelivered refund asks for nothing twice. */
      refunds: string[];
      /** Set by a full refund: the invoice is to be voided once issued. */
      voidRequested: boolean;
    };

export const initialState = (): EinvoiceState => ({ status: 'Empty' });

export function evolve(state: EinvoiceState, event: EinvoiceEvent): EinvoiceState {
  const einvoice = event.data.object;
  if (event.type === 'EinvoiceRequested') {
    const { organization, environment } = event.data;
    const { contact } = event.data;
    return { status: 'Existing', einvoice, organization, environment, contact, refunds: [], voidRequested: false };
  }
  if (state.status === 'Empty') return state;
  if (event.type === 'EinvoiceRefundRecorded') {
    return {
      ...state,
      einvoice,
      refunds: [...state.refunds, event.data.refund_id],
      voidRequested: state.voidRequested || event.data.voids,
    };
  }
  return { ...state, einvoice };
}

export type RequestEinvoice = {
  type: 'RequestEinvoice';
  data: {
    einvoiceId: string;
    organization: string;
    environment: Environment;
    invoiceId: string | null;
    orderId: string | null;
    customerId: string | null;
    buyer: EinvoiceChoice;
    contact: EinvoiceContact;
    provider: 'ecpay' | 'amego';
    merchantOrderNumber: string;
    taxType: EinvoiceTaxType;
    description: string;
    total: number;
    now: Date;
  };
};
/** Claims the pending action for one process; refused (409) when nothing is due by `now`. */
export type StartAttempt = { type: 'StartAttempt'; data: { now: Date } };
export type RecordIssued = {
  type: 'RecordIssued';
  data: { number: string; randomCode: string; issuedAt: Date; now: Date };
};
export type RecordAttemptFailed = { type: 'RecordAttemptFailed'; data: { code: string; message: string; now: Date } };
export type WarnDeadline = { type: 'WarnDeadline'; data: { now: Date } };
export type RecordRefund = { type: 'RecordRefund'; data: { refundId: string; amount: number; now: Date } };
export type RecordVoided = { type: 'RecordVoided'; data: { now: Date } };
export type RecordAllowanceIssued = {
  type: 'RecordAllowanceIssued';
  data: { refundId: string; number: string; now: Date };
};
export type EinvoiceCommand =
  | RequestEinvoice
  | StartAttempt
  | RecordIssued
  | RecordAttemptFailed
  | WarnDeadline
  | RecordRefund
  | RecordVoided
  | RecordAllowanceIssued;

type Existing = Extract<EinvoiceState, { status: 'Existing' }>;

export function decide(command: EinvoiceCommand, state: EinvoiceState): EinvoiceEvent[] {
  if (command.type === 'RequestEinvoice') return request(command.data, state);
  if (state.status === 'Empty') throw conflict('No such e-invoice');
  const tenant = { einvoice_id: state.einvoice.id, organization: state.organization, environment: state.environment };
  const { einvoice } = state;
  const at = command.data.now.toISOString();
  switch (command.type) {
    case 'StartAttempt': {
      if (
        !einvoice.pending_action ||
        !einvoice.next_attempt_at ||
        Date.parse(einvoice.next_attempt_at) > command.data.now.getTime()
      )
        throw conflict('Nothing of this e-invoice is due');
      const attempt = einvoice.attempt_count + 1;
      const next = new Date(command.data.now.getTime() + ATTEMPT_LEASE_MS).toISOString();
      return [
        {
          type: 'EinvoiceAttemptStarted',
          data: {
            ...tenant,
            attempt,
            object: { ...einvoice, attempt_count: attempt, next_attempt_at: next, updated_at: at },
          },
        },
      ];
    }
    case 'RecordIssued': {
      if (einvoice.status !== 'pending') return [];
      const issued: EinvoiceResource = {
        ...einvoice,
        status: 'issued',
        number: command.data.number,
        random_code: command.data.randomCode,
        issued_at: command.data.issuedAt.toISOString(),
        last_error: null,
        updated_at: at,
      };
      return [{ type: 'EinvoiceIssued', data: { ...tenant, object: afterAction(issued, state, command.data.now) } }];
    }
    case 'RecordAttemptFailed': {
      if (!einvoice.pending_action) return [];
      const next = new Date(command.data.now.getTime() + retryDelayMs(einvoice.attempt_count)).toISOString();
      const failure = { code: command.data.code, message: command.data.message };
      return [
        {
          type: 'EinvoiceAttemptFailed',
          data: {
            ...tenant,
            attempt: einvoice.attempt_count,
            failure,
            object: { ...einvoice, next_attempt_at: next, last_error: failure, updated_at: at },
          },
        },
      ];
    }
    case 'WarnDeadline': {
      if (einvoice.status !== 'pending' || einvoice.deadline_warned_at) return [];
      const paidAt = new Date(einvoice.created_at);
      if (command.data.now < warnAtOf(paidAt, new Date(einvoice.deadline))) return [];
      return [
        {
          type: 'EinvoiceDeadlineApproaching',
          data: { ...tenant, object: { ...einvoice, deadline_warned_at: at, updated_at: at } },
        },
      ];
    }
    case 'RecordRefund':
      return recordRefund(command.data, state, tenant);
    case 'RecordVoided': {
      if (einvoice.status !== 'issued') return [];
      const voided: EinvoiceResource = {
        ...einvoice,
        status: 'voided',
        voided_at: at,
        last_error: null,
        updated_at: at,
      };
      return [
        {
          type: 'EinvoiceVoided',
          data: { ...tenant, object: afterAction(voided, { ...state, voidRequested: false }, command.data.now) },
        },
      ];
    }
    case 'RecordAllowanceIssued': {
      const pending = einvoice.allowances.find((a) => a.refund_id === command.data.refundId && a.status === 'pending');
      if (!pending) return [];
      const allowance: EinvoiceAllowance = { ...pending, status: 'issued', number: command.data.number, issued_at: at };
      const allowanced: EinvoiceResource = {
        ...einvoice,
        allowances: einvoice.allowances.map((a) => (a === pending ? allowance : a)),
        amount_allowanced: einvoice.amount_allowanced + pending.amount,
        last_error: null,
        updated_at: at,
      };
      return [
        {
          type: 'EinvoiceAllowanceIssued',
          data: { ...tenant, allowance, object: afterAction(allowanced, state, command.data.now) },
        },
      ];
    }
    default: {
      const _exhaustive: never = command;
      return [];
    }
  }
}

function request(data: RequestEinvoice['data'], state: EinvoiceState): EinvoiceEvent[] {
  // One e-invoice per source: a redelivered payment asks for nothing more.
  if (state.status === 'Existing') return [];
  if (!Number.isSafeInteger(data.total) || data.total < 1) throw new Error('An e-invoice is for a paid amount');
  const at = data.now.toISOString();
  const { salesAmount, taxAmount } = splitTax(data.total, data.buyer, data.taxType);
  const einvoice: EinvoiceResource = {
    object: 'einvoice',
    id: data.einvoiceId,
    invoice_id: data.invoiceId,
    order_id: data.orderId,
    customer_id: data.customerId,
    status: 'pending',
    pending_action: 'issue',
    provider: data.provider,
    merchant_order_number: data.merchantOrderNumber,
    buyer: data.buyer,
    tax_type: data.taxType,
    description: data.description,
    currency: 'TWD',
    total: data.total,
    sales_amount: salesAmount,
    tax_amount: taxAmount,
    number: null,
    random_code: null,
    issued_at: null,
    deadline: deadlineOf(data.now, data.buyer).toISOString(),
    deadline_warned_at: null,
    attempt_count: 0,
    next_attempt_at: at,
    last_error: null,
    voided_at: null,
    amount_allowanced: 0,
    allowances: [],
    created_at: at,
    updated_at: at,
    livemode: livemodeOf(data.environment),
  };
  const { einvoiceId, organization, environment, contact } = data;
  return [
    {
      type: 'EinvoiceRequested',
      data: { einvoice_id: einvoiceId, organization, environment, object: einvoice, contact },
    },
  ];
}

/**
 * A refund of the payment: the whole of it (with nothing given back before) voids the invoice
 * while its filing period lasts (`voidableAt`); anything else is an allowance of the refund's
 * amount, never more than what the invoice still holds.
 */
function recordRefund(
  data: RecordRefund['data'],
  state: Existing,
  tenant: { einvoice_id: string; organization: string; environment: Environment },
): EinvoiceEvent[] {
  const { einvoice } = state;
  if (state.refunds.includes(data.refundId) || einvoice.status === 'voided' || state.voidRequested) return [];
  const held = einvoice.allowances.reduce((sum, a) => sum + a.amount, 0);
  const amount = Math.min(data.amount, einvoice.total - held);
  if (amount < 1) return [];
  const issuedAt = einvoice.issued_at ? new Date(einvoice.issued_at) : null;
  const voids = held === 0 && amount === einvoice.total && voidableAt(issuedAt, data.now);
  const at = data.now.toISOString();
  const allowances = voids
    ? einvoice.allowances
    : [
        ...einvoice.allowances,
        { refund_id: data.refundId, amount, status: 'pending' as const, number: null, issued_at: null },
      ];
  const next = { ...state, voidRequested: voids, einvoice: { ...einvoice, allowances, updated_at: at } };
  return [
    {
      type: 'EinvoiceRefundRecorded',
      data: {
        ...tenant,
        refund_id: data.refundId,
        amount,
        voids,
        object: einvoice.status === 'pending' ? next.einvoice : afterAction(next.einvoice, next, data.now),
      },
    },
  ];
}

/** What is asked of the provider next, once the invoice exists: its void, else the first allowance still pending. */
function afterAction(einvoice: EinvoiceResource, state: Existing, now: Date): EinvoiceResource {
  const action =
    einvoice.status === 'voided'
      ? null
      : state.voidRequested
        ? ('void' as const)
        : einvoice.allowances.some((a) => a.status === 'pending')
          ? ('allowance' as const)
          : null;
  return { ...einvoice, pending_action: action, next_attempt_at: action ? now.toISOString() : null };
}
