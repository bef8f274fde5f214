import type { Response } from 'express';
import type { OpenPortal } from './open-portal';
import { renderMessagePage } from './render';

// The answers every portal page shares: back to the main page with a notice, or not found.

/** Notices the main page shows after an action redirected to it (`?notice=`). */
export const NOTICES = [
  'canceled',
  'canceling',
  'resumed',
  'card_updated',
  'card_paid',
  'switched',
  'scheduled',
  'schedule_canceled',
  'einvoice_saved',
] as const;
export type Notice = (typeof NOTICES)[number];

/** After a POST, back to the main page (303, so a reload does not post again). */
export const backToPortal = (res: Response, portal: OpenPortal, outcome: { notice?: Notice; error?: 'not_allowed' }) =>
  res.redirect(
    303,
    `${portal.base}?${new URLSearchParams(outcome.notice ? { notice: outcome.notice } : { error: outcome.error ?? '' })}`,
  );

export function notFoundPage(res: Response, portal: OpenPortal) {
  res
    .status(404)
    .type('html')
    .send(
      renderMessagePage({
        locale: portal.locale,
        title: portal.t.invalidTitle,
        message: portal.t.notAllowed,
        back: { href: portal.base, text: portal.t.back },
      }),
    );
}
