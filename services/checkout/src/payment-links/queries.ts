import { type CallerIdentity, type PaymentLink, livemodeOf, unknownCursor } from '@billing/contracts';
import { type SqlExecutor, keysetPage } from '@billing/eventstore';
import { type PaymentLinkView, isSoldOut } from './link';
import { paymentLinkSessionsTable, paymentLinksTable } from './read-model';

export const linkUrl = (paymentLinkUrl: string, urlId: string) => `${paymentLinkUrl.replace(/\/+$/, '')}/${urlId}`;

export async function findLinkByUrlId(sql: SqlExecutor, schema: string, urlId: string) {
  const { rows } = await sql.query<{ document: PaymentLinkView }>(
    `SELECT document FROM ${paymentLinksTable(schema)} WHERE url_id = $1`,
    [urlId],
  );
  return rows[0]?.document ?? null;
}

/**
 * Whether the session was opened by a payment link that has since sold out (reached
 * `max_completions`): such a session is not paid, so a link never sells more than its limit.
 */
export async function openedBySoldOutLink(
  sql: SqlExecutor,
  schema: string,
  session: { id: string; payment_link_id?: string | null },
): Promise<boolean> {
  if (session.payment_link_id === null) return false;
  const sessionId = session.id;
  const { rows } = await sql.query<{ document: PaymentLinkView }>(
    `SELECT l.document FROM ${paymentLinkSessionsTable(schema)} s JOIN ${paymentLinksTable(schema)} l ON l.id = s.link_id
     WHERE s.session_id = $1`,
    [sessionId],
  );
  return rows[0] !== undefined && isSoldOut(rows[0].document);
}

/** Another organization's or environment's link is absent to the caller. */
export async function findCallerLink(sql: SqlExecutor, schema: string, caller: CallerIdentity, id: string) {
  const { rows } = await sql.query<{ document: PaymentLinkView }>(
    `SELECT document FROM ${paymentLinksTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, caller.organization, caller.environment],
  );
  return rows[0]?.document ?? null;
}

/** Newest first; `starting_after` is a link id of the caller's (an unknown one is a 400). */
export async function listCallerLinks(
  sql: SqlExecutor,
  schema: string,
  caller: CallerIdentity,
  query: { limit: number; starting_after?: string; active?: boolean },
): Promise<{ links: PaymentLinkView[]; hasMore: boolean }> {
  const table = paymentLinksTable(schema);
  const after = query.starting_after ? [await cursorSeq(sql, table, caller, query.starting_after)] : null;
  const active = query.active;
  const { rows, hasMore } = await keysetPage<{ document: PaymentLinkView }>(sql, {
    from: table,
    select: 'document',
    where: { organization: caller.organization, environment: caller.environment },
    filters: active === undefined ? [] : [(param) => `active = ${param(active)}::boolean`],
    order: CREATION_ORDER,
    after,
    limit: query.limit,
  });
  return { links: rows.map((r) => r.document), hasMore };
}

/** Links are listed in the order they were created, newest first: `seq` is that order. */
const CREATION_ORDER = [{ column: 'seq', type: 'bigint' }] as const;

/** The list position of the caller's link `id`; 400 when the caller has no such link. */
async function cursorSeq(sql: SqlExecutor, table: string, caller: CallerIdentity, id: string): Promise<string> {
  const { rows } = await sql.query<{ seq: string }>(
    `SELECT seq::text AS seq FROM ${table} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [id, caller.organization, caller.environment],
  );
  if (!rows[0]) throw unknownCursor(id, 'payment link');
  return rows[0].seq;
}

export function toPaymentLinkResource(link: PaymentLinkView, paymentLinkUrl: string): PaymentLink {
  return {
    object: 'payment_link',
    id: link.id,
    url: linkUrl(paymentLinkUrl, link.url_id),
    url_id: link.url_id,
    active: link.active,
    product_id: link.product.id,
    product: link.product,
    promotion_code: link.promotion_code,
    collect_payment_method: link.collect_payment_method,
    success_url: link.success_url,
    max_completions: link.max_completions,
    metadata: link.metadata,
    locale: link.locale ?? null,
    environment: link.environment,
    view_count: link.view_count,
    session_count: link.session_count,
    completed_count: link.completed_count,
    created_at: link.created_at,
    livemode: livemodeOf(link.environment),
  };
}

/** The link that opened the session, if any. */
export async function linkIdOfSession(sql: SqlExecutor, schema: string, sessionId: string): Promise<string | null> {
  const { rows } = await sql.query<{ link_id: string }>(
    `SELECT link_id FROM ${paymentLinkSessionsTable(schema)} WHERE session_id = $1`,
    [sessionId],
  );
  return rows[0]?.link_id ?? null;
}
