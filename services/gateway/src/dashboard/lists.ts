import { type Html, html } from '@billing/service';
import { ApiFailure, withQuery } from './client';
import { type PageContext, pager, select } from './page';

// What the dashboard's lists share: Taipei day ranges and their form, the pages of admin lists
// (one list, or several merged newest first), and their CSV exports, streamed a page at a time.

/** A page of an admin list. */
export type ListPage<T> = { data: T[]; has_more: boolean };

// ---------------------------------------------------------------- Taipei days

const DAY_MS = 86_400_000;
/** Taiwan keeps no daylight saving time: Asia/Taipei is UTC+8 all year. */
const TAIPEI_OFFSET_MS = 8 * 3_600_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Taipei calendar days `from` to `to`, inclusive ('' for an open end), and the instants `[start, end)` they span. */
export interface DayRange {
  from: string;
  to: string;
  start?: string;
  end?: string;
}

/** The Taipei calendar day of an instant, `YYYY-MM-DD`. */
export const taipeiDay = (instant: Date) => new Date(instant.getTime() + TAIPEI_OFFSET_MS).toISOString().slice(0, 10);

/** An instant as ISO 8601 in Taipei's time, `2026-05-01T09:30:00+08:00`; '' for none. */
export function taipeiIso(iso: string | null | undefined): string {
  if (!iso) return '';
  const instant = new Date(iso);
  if (Number.isNaN(instant.getTime())) return iso;
  return `${new Date(instant.getTime() + TAIPEI_OFFSET_MS).toISOString().slice(0, 19)}+08:00`;
}

/** The first instant of a Taipei day, or null when the text is not a day of the calendar (2026-02-30). */
function startOfTaipeiDay(day: string): Date | null {
  if (!DATE.test(day)) return null;
  const start = new Date(`${day}T00:00:00+08:00`);
  return Number.isNaN(start.getTime()) || taipeiDay(start) !== day ? null : start;
}

/**
 * The days `from` and `to` (inclusive) as given, and the instants that bound them. A day not
 * given is `byDefault`'s: this month in Taipei up to today, or no bound at all. Null when a day
 * is not a calendar day or the first is after the last.
 */
export function dayRange(
  given: { from?: string; to?: string },
  today: string,
  byDefault: 'this-month' | 'any-time',
): DayRange | null {
  const month = byDefault === 'this-month';
  const from = given.from || (month ? `${today.slice(0, 8)}01` : '');
  const to = given.to || (month ? today : '');
  const start = from ? startOfTaipeiDay(from) : undefined;
  const last = to ? startOfTaipeiDay(to) : undefined;
  if (start === null || last === null || (start && last && start > last)) return null;
  return {
    from,
    to,
    start: start?.toISOString(),
    end: last ? new Date(last.getTime() + DAY_MS).toISOString() : undefined,
  };
}

/** The range a page's `?from=&to=` asks for (`dayRange`), by the gateway's clock. */
export const askedRange = (ctx: PageContext, byDefault: 'this-month' | 'any-time') =>
  dayRange(ctx.query, taipeiDay(ctx.now()), byDefault);

/** The range as links carry it (the next page, the export): its days, open ends left out. */
export const rangeLinkParams = (range: DayRange | null): Record<string, string> =>
  Object.fromEntries(Object.entries({ from: range?.from, to: range?.to }).filter(([, day]) => day)) as Record<
    string,
    string
  >;

export const rangeError = (ctx: PageContext) =>
  html`<p class="error" role="alert">${ctx.t('Choose two days, the first not after the last.')}</p>`;

/** The one choice of `allowed` that `?status=` names, or '' (all). */
export const askedStatus = (ctx: PageContext, allowed: readonly string[]) =>
  allowed.includes(ctx.query.status ?? '') ? ctx.query.status! : '';

/** A status select of a list's filters: all, or one of `statuses` (each in the user's words). */
export function statusSelect(ctx: PageContext, statuses: ReadonlyArray<[string, string]>, selected: string): Html {
  return select('status', ctx.t('Status'), 'status', [['', ctx.t('All')], ...statuses], selected);
}

/**
 * A list's filters (its own `fields`, then the Taipei days), and the link to its CSV export of
 * the same filters (`csv`, under the organization's base), left out while the days are wrong.
 */
export function filterForm(
  ctx: PageContext,
  options: { range: DayRange | null; csv: string; filters?: Record<string, string>; fields?: Html; submit?: string },
): Html {
  const { t } = ctx;
  const { range, csv, filters = {}, fields = html``, submit = t('Show') } = options;
  const day = (name: 'from' | 'to') => range?.[name] ?? ctx.query[name] ?? '';
  const query = new URLSearchParams({ ...rangeLinkParams(range), ...filters }).toString();
  const exportLink = range ? `${ctx.base}/${csv}${query ? `?${query}` : ''}` : null;
  const filtered = ['from', 'to', 'status', 'q'].some((name) => ctx.query[name]);
  const clear = filtered ? html` <a href="${ctx.req.baseUrl + ctx.req.path}">${t('Clear')}</a>` : '';
  return html`<form class="card" method="get">
    ${fields}
    <label for="from">${t('From (Taipei day)')}</label
    ><input id="from" name="from" type="date" value="${day('from')}" /> <label for="to">${t('To (Taipei day)')}</label
    ><input id="to" name="to" type="date" value="${day('to')}" />
    <div>
      <button type="submit">${submit}</button>${clear}${
        exportLink ? html` <a href="${exportLink}" download>${t('Export CSV')}</a>` : ''
      }
    </div>
  </form>`;
}

/** The money lists' own links, at the top of each. */
export function moneyListsNav(ctx: PageContext, current: 'payments' | 'invoices' | 'refunds'): Html {
  const { t } = ctx;
  const lists = [
    ['payments', t('Payments')],
    ['invoices', t('Invoices')],
    ['refunds', t('Refunds')],
  ] as const;
  return html`<nav class="lists" aria-label="${t('Money')}">
    ${lists.map(
      ([path, label]) =>
        html`<a href="${ctx.base}/${path}" ${path === current ? html` aria-current="page"` : ''}>${label}</a>`,
    )}
  </nav>`;
}

// ---------------------------------------------------------------- pages of admin lists

/** One page of an admin list in a range: `path` with the environment, the range's instants, filters and cursor. */
/**
 * The filters of the three money lists (payments, invoices, refunds): their Taipei days, this
 * month by default, and a status; the form, under the links between the three.
 */
export function moneyListFilters(
  ctx: PageContext,
  list: 'payments' | 'invoices' | 'refunds',
  statuses: readonly string[],
) {
  const range = askedRange(ctx, 'this-month');
  const status = askedStatus(ctx, statuses);
  const filters: Record<string, string> = status ? { status } : {};
  const fields = statusSelect(
    ctx,
    statuses.map((s) => [s, ctx.t(s)]),
    status,
  );
  const form = html`${moneyListsNav(ctx, list)}${filterForm(ctx, { range, csv: `${list}.csv`, filters, fields })}`;
  return { range, status, filters, form };
}

/** The Next link of a list read with `onePage` or `mergedPage`, keeping its range and filters. */
export const listPager = (
  ctx: PageContext,
  page: { next: string | null },
  range: DayRange | null,
  filters: Record<string, string>,
) => pager(ctx, page.next !== null, page.next ?? undefined, { ...rangeLinkParams(range), ...filters });

export const rangePage = <T>(
  ctx: PageContext,
  path: string,
  range: DayRange,
  query: Record<string, string | number | undefined>,
) =>
  ctx.api.admin<ListPage<T>>(
    'GET',
    withQuery(path, { environment: ctx.environment, from: range.start, to: range.end, ...query }),
  );

/** A list read a page at a time: its rows after a cursor (`id`, each row's own cursor). */
export type ListSource<Row> = (
  limit: number,
  after: string | undefined,
) => Promise<{ rows: Array<{ id: string; row: Row }>; hasMore: boolean }>;

/** The source of an admin list's pages, each item shown as `toRow` makes it. */
export function listSource<T extends { id: string }, Row>(
  read: (limit: number, after: string | undefined) => Promise<ListPage<T>>,
  toRow: (item: T) => Row,
): ListSource<Row> {
  return async (limit, after) => {
    const page = await read(limit, after);
    return { rows: page.data.map((item) => ({ id: item.id, row: toRow(item) })), hasMore: page.has_more };
  };
}

/** A page of one list: its rows, and the cursor of the next page (null on the last). */
export async function onePage<Row>(source: ListSource<Row>, after: string | undefined, limit: number) {
  const page = await source(limit, after);
  const last = page.rows.at(-1)?.id;
  return { rows: page.rows.map((r) => r.row), next: page.hasMore && last ? last : null };
}

type Timed = { at: string };
const newestFirst = (a: Timed, b: Timed) => Date.parse(b.at) - Date.parse(a.at);

/**
 * A page of several lists, each newest first, as one newest first: `limit` rows, and the cursor
 * of the next page, null on the last. The cursor holds each list's own, joined by commas: the
 * last of its rows shown, or the one it was given when none of its rows were.
 */
export async function mergedPage<Row extends Timed>(
  sources: ListSource<Row>[],
  cursor: string | undefined,
  limit: number,
): Promise<{ rows: Row[]; next: string | null }> {
  const afters = (cursor ?? '').split(',');
  const pages = await Promise.all(sources.map((source, i) => source(limit, afters[i] || undefined)));
  // Array sort is stable: among rows of one instant, the first list's come first, as in `mergedRows`.
  const all = pages
    .flatMap((page, list) => page.rows.map((item) => ({ ...item, list })))
    .sort((a, b) => newestFirst(a.row, b.row));
  const shown = all.slice(0, limit);
  const more = all.length > limit || pages.some((page) => page.hasMore);
  const next = sources.map((_, i) => shown.filter((item) => item.list === i).at(-1)?.id ?? afters[i] ?? '');
  return { rows: shown.map((item) => item.row), next: more ? next.join(',') : null };
}

// ---------------------------------------------------------------- exports

/** How many rows an export reads at a time: all it holds in memory. */
export const EXPORT_PAGE = 100;

/** Every row of a list, a page at a time. */
export async function* everyRow<Row>(source: ListSource<Row>, pageSize = EXPORT_PAGE): AsyncGenerator<Row> {
  let after: string | undefined;
  for (;;) {
    const page = await source(pageSize, after);
    for (const item of page.rows) yield item.row;
    if (!page.hasMore || page.rows.length === 0) return;
    after = page.rows.at(-1)!.id;
  }
}

/** Every row of several lists, each newest first, as one newest first, holding a page of each. */
export async function* mergedRows<Row extends Timed>(sources: ListSource<Row>[]): AsyncGenerator<Row> {
  const lists = sources.map((source) => everyRow(source));
  const heads = await Promise.all(lists.map((list) => list.next()));
  for (;;) {
    let newest = -1;
    heads.forEach((head, i) => {
      if (!head.done && (newest < 0 || newestFirst(head.value, heads[newest]!.value as Row) < 0)) newest = i;
    });
    if (newest < 0) return;
    yield heads[newest]!.value as Row;
    heads[newest] = await lists[newest]!.next();
  }
}

type CsvValue = string | number | boolean | null | undefined;

/**
 * A cell as spreadsheets read it safely: quoted when it holds a comma, quote or line break, and
 * text that a spreadsheet would take for a formula (a leading `=`, `+`, `-`, `@`, tab or carriage
 * return) made text with a `'`. Numbers (amounts in whole TWD) stay numbers.
 */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** An export's columns, in order: each one's header and its value in an item's row. */
export type CsvColumns<T> = ReadonlyArray<readonly [header: string, value: (item: T) => CsvValue]>;

export const csvLine = (values: CsvValue[]) => `${values.map(csvCell).join(',')}\r\n`;

/** `payments-sandbox-2026-05-01-to-2026-05-31.csv`; an open end is left out of the name. */
export function exportName(list: string, ctx: PageContext, range: DayRange): string {
  const { from, to } = range;
  const days = from && to ? `-${from}-to-${to}` : from ? `-from-${from}` : to ? `-to-${to}` : '';
  return `${list}-${ctx.envSlug}${days}.csv`;
}

/**
 * Answers a CSV download: a byte-order mark (Excel reads UTF-8 only with one), the header, then
 * a line per row as `rows` yields them, each written as it comes, waiting while the client is
 * slower: a large merchant's export holds a page in memory, never the whole range. A read that
 * fails before the first row answers an error; one that fails later resets the connection (the
 * error handler does), so that a cut file is never taken for a whole one. A client that goes away
 * stops the reads.
 */
export async function sendCsv<T>(
  ctx: PageContext,
  name: string,
  columns: CsvColumns<T>,
  items: AsyncIterable<T>,
): Promise<void> {
  const { res } = ctx;
  const rows = items[Symbol.asyncIterator]();
  const header = columns.map(([title]) => title);
  const valuesOf = (item: T) => columns.map(([, value]) => value(item));
  let next: IteratorResult<T>;
  try {
    next = await rows.next();
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    res.status(502).type('text').send(error.explanation);
    return;
  }
  res.status(200).type('text/csv; charset=utf-8').set('Content-Disposition', `attachment; filename="${name}"`);
  res.write(`\uFEFF${csvLine(header)}`);
  // A failure from here on reaches the error handler, which resets a response already started.
  while (!next.done) {
    if (res.destroyed) return;
    if (!res.write(csvLine(valuesOf(next.value)))) await drained(res);
    next = await rows.next();
  }
  res.end();
}

/** Until the response can take more, or the client is gone. */
const drained = (res: PageContext['res']) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });

/** Answers an export whose days are wrong. */
export function refuseRange(ctx: PageContext): void {
  ctx.res.status(400).type('text').send(ctx.t('Choose two days, the first not after the last.'));
}
