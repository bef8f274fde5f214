import type { Environment, ProductType } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const paymentLinkStream = (linkId: string) => `payment_link-${linkId}`;

export interface LinkSettings {
  active: boolean;
  promotion_code: string | null;
  collect_payment_method: 'always' | 'if_required';
  success_url: string | null;
  max_completions: number | null;
  metadata: Record<string, string> | null;
  /** The checkout page's language; absent (links made before) or null: the buyer's browser decides. */
  locale?: 'zh-TW' | 'en' | null;
}

/** A payment link as checkout keeps it: settings, the product summary taken at creation, counters. */
export interface PaymentLinkView extends LinkSettings {
  id: string;
  url_id: string;
  organization: string;
  environment: Environment;
  product: { id: string; name: string; slug: string | null; price: number; currency: string; type: ProductType };
  view_count: number;
  session_count: number;
  completed_count: number;
  created_at: string;
  updated_at: string;
}

export type PaymentLinkCreatedData = Omit<
  PaymentLinkView,
  'view_count' | 'session_count' | 'completed_count' | 'updated_at'
>;
export type PaymentLinkEvent =
  | { type: 'PaymentLinkCreated'; data: PaymentLinkCreatedData }
  | { type: 'PaymentLinkUpdated'; data: { link_id: string; changes: Partial<LinkSettings>; updated_at: string } }
  | { type: 'PaymentLinkVisited'; data: { link_id: string; visited_at: string } }
  | { type: 'PaymentLinkSessionCreated'; data: { link_id: string; session_id: string; created_at: string } }
  | { type: 'PaymentLinkCompleted'; data: { link_id: string; session_id: string; completed_at: string } };

export const paymentLinkEvents = streamEvents<PaymentLinkEvent>({
  PaymentLinkCreated: true,
  PaymentLinkUpdated: true,
  PaymentLinkVisited: true,
  PaymentLinkSessionCreated: true,
  PaymentLinkCompleted: true,
});

export type PaymentLinkState = { status: 'Empty' } | { status: 'Exists'; link: PaymentLinkView };

export const initialState = (): PaymentLinkState => ({ status: 'Empty' });

export function evolve(state: PaymentLinkState, event: PaymentLinkEvent): PaymentLinkState {
  if (event.type === 'PaymentLinkCreated') {
    const link = {
      ...event.data,
      view_count: 0,
      session_count: 0,
      completed_count: 0,
      updated_at: event.data.created_at,
    };
    return { status: 'Exists', link };
  }
  if (state.status === 'Empty') return state;
  const link = state.link;
  switch (event.type) {
    case 'PaymentLinkUpdated':
      return { status: 'Exists', link: { ...link, ...event.data.changes, updated_at: event.data.updated_at } };
    case 'PaymentLinkVisited':
      return { status: 'Exists', link: { ...link, view_count: link.view_count + 1 } };
    case 'PaymentLinkSessionCreated':
      return { status: 'Exists', link: { ...link, session_count: link.session_count + 1 } };
    case 'PaymentLinkCompleted':
      return { status: 'Exists', link: { ...link, completed_count: link.completed_count + 1 } };
  }
}

/** As many payments as `max_completions` allows: nothing more is paid through the link. */
export const isSoldOut = (link: PaymentLinkView) =>
  link.max_completions !== null && link.completed_count >= link.max_completions;

/** Inactive or sold out: a visit shows an error page. */
export const isClosed = (link: PaymentLinkView) => !link.active || isSoldOut(link);

export const SOLD_OUT_MESSAGE = 'This payment link has reached its limit and no longer accepts payments.';
