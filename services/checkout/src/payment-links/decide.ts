import { notFound } from '@billing/contracts';
import type { LinkSettings, PaymentLinkCreatedData, PaymentLinkEvent, PaymentLinkState } from './link';

export type PaymentLinkCommand =
  | { type: 'CreatePaymentLink'; data: PaymentLinkCreatedData }
  | { type: 'UpdatePaymentLink'; data: { linkId: string; changes: Partial<LinkSettings>; now: Date } }
  | { type: 'CountVisit'; data: { linkId: string; now: Date } }
  | { type: 'CountSession'; data: { linkId: string; sessionId: string; now: Date } };

export function decide(command: PaymentLinkCommand, state: PaymentLinkState): PaymentLinkEvent[] {
  if (command.type === 'CreatePaymentLink') {
    if (state.status !== 'Empty') throw new Error(`payment link ${command.data.id} exists already`);
    return [{ type: 'PaymentLinkCreated', data: command.data }];
  }
  if (state.status === 'Empty') throw notFound(`No such payment link: ${command.data.linkId}`);
  const { link } = state;
  const at = command.data.now.toISOString();
  switch (command.type) {
    case 'UpdatePaymentLink': {
      // Only what changes is recorded; a PATCH that changes nothing appends nothing.
      const changes = Object.fromEntries(
        Object.entries(command.data.changes).filter(
          ([key, value]) =>
            value !== undefined && JSON.stringify(link[key as keyof LinkSettings]) !== JSON.stringify(value),
        ),
      ) as Partial<LinkSettings>;
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'PaymentLinkUpdated', data: { link_id: link.id, changes, updated_at: at } }];
    }
    case 'CountVisit':
      return [{ type: 'PaymentLinkVisited', data: { link_id: link.id, visited_at: at } }];
    case 'CountSession':
      return [
        {
          type: 'PaymentLinkSessionCreated',
          data: { link_id: link.id, session_id: command.data.sessionId, created_at: at },
        },
      ];
  }
}
