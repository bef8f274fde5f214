import { formatDateTime, formatTwd, html } from '@billing/service';

// The dashboard's own helpers over the pages' kit (@billing/service: html, formatTwd, formatDateTime).

/** Whole TWD, as merchants read it (`formatTwd`); a dash for none. */
export const twd = (amount: number | null | undefined) =>
  amount === null || amount === undefined ? '—' : formatTwd(amount);

/** An ISO time in the organization's zone (Asia/Taipei), with the zone, inside a <time> element. */
export const when = (iso: string | null | undefined) =>
  iso ? html`<time datetime="${iso}">${formatDateTime(iso)}</time>` : html`—`;
