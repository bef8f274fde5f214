import { type ListSource, csvCell, csvLine, dayRange, everyRow, mergedPage, mergedRows, taipeiIso } from './lists';

describe('a cell of an export', () => {
  it.each([
    ['plain text, as it is', 'Tea mug', 'Tea mug'],
    ['a number, as digits', 480, '480'],
    ['nothing, as an empty cell', null, ''],
    ['a boolean, as a word', true, 'true'],
    ['a comma, quoted', 'Leaf, Co', '"Leaf, Co"'],
    ['a quote, doubled inside quotes', 'the "best" mug', '"the ""best"" mug"'],
    ['a line break, quoted', 'two\nlines', '"two\nlines"'],
    ['a carriage return, made text and quoted', '\rx', `"'\rx"`],
    ['a formula, made text', '=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['a leading plus, minus or at, made text', '-2+3', "'-2+3"],
    ['a leading at, made text', '@SUM(A1)', "'@SUM(A1)"],
    ['a leading tab, made text', '\t=1', "'\t=1"],
    ['an equals sign inside, as it is', 'a=b', 'a=b'],
    ['a negative amount, a number still', -120, '-120'],
    ['Chinese, as it is', '茶葉禮盒', '茶葉禮盒'],
  ] as const)('given %s', (_case, value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it('ends each line with CRLF', () => {
    expect(csvLine(['a', 1, null, 'b,c'])).toBe('a,1,,"b,c"\r\n');
  });
});

describe('an instant in Taipei', () => {
  it.each([
    ['2026-05-01T01:30:00.000Z', '2026-05-01T09:30:00+08:00'],
    ['2026-04-30T16:00:00.000Z', '2026-05-01T00:00:00+08:00'],
    ['2026-04-30T15:59:59.999Z', '2026-04-30T23:59:59+08:00'],
  ])('%s is %s', (iso, taipei) => {
    expect(taipeiIso(iso)).toBe(taipei);
  });

  it('is empty for none', () => {
    expect(taipeiIso(null)).toBe('');
  });
});

describe('a range of Taipei days', () => {
  const today = '2026-05-17';

  it('spans from the first instant of the first day to the first instant after the last', () => {
    expect(dayRange({ from: '2026-05-01', to: '2026-05-31' }, today, 'this-month')).toEqual({
      from: '2026-05-01',
      to: '2026-05-31',
      start: '2026-04-30T16:00:00.000Z',
      end: '2026-05-31T16:00:00.000Z',
    });
    expect(dayRange({ from: '2026-05-03', to: '2026-05-03' }, today, 'any-time')).toMatchObject({
      start: '2026-05-02T16:00:00.000Z',
      end: '2026-05-03T16:00:00.000Z',
    });
  });

  it('is this month up to today, or no bound at all, where no day is given', () => {
    expect(dayRange({}, today, 'this-month')).toMatchObject({ from: '2026-05-01', to: '2026-05-17' });
    expect(dayRange({ from: '', to: '' }, today, 'this-month')).toMatchObject({ from: '2026-05-01', to: today });
    expect(dayRange({ to: '2026-05-10' }, today, 'this-month')).toMatchObject({ from: '2026-05-01', to: '2026-05-10' });
    expect(dayRange({}, today, 'any-time')).toEqual({ from: '', to: '', start: undefined, end: undefined });
    expect(dayRange({ from: '2026-05-10' }, today, 'any-time')).toEqual({
      from: '2026-05-10',
      to: '',
      start: '2026-05-09T16:00:00.000Z',
      end: undefined,
    });
  });

  it.each([
    ['the first after the last', { from: '2026-05-02', to: '2026-05-01' }],
    ['a day not in the calendar', { from: '2026-02-30' }],
    ['a month not in the calendar', { to: '2026-13-01' }],
    ['another format', { from: '2026/05/01' }],
    ['a time', { from: '2026-05-01T00:00:00Z' }],
  ])('is refused given %s', (_case, given) => {
    expect(dayRange(given, today, 'any-time')).toBeNull();
  });
});

type Row = { at: string; name: string };
/** A list of rows newest first, read as an admin list is: after the id of the last row seen. */
function fakeSource(rows: Row[], reads: Array<[number, string | undefined]> = []): ListSource<Row> {
  return async (limit, after) => {
    reads.push([limit, after]);
    const start = after === undefined ? 0 : rows.findIndex((row) => row.name === after) + 1;
    const page = rows.slice(start, start + limit);
    return { rows: page.map((row) => ({ id: row.name, row })), hasMore: start + limit < rows.length };
  };
}
const at = (day: number, name: string): Row => ({ at: `2026-05-${String(day).padStart(2, '0')}T00:00:00Z`, name });

describe('lists merged newest first', () => {
  const charges = [at(20, 'c20'), at(15, 'c15'), at(10, 'c10'), at(5, 'c5')];
  const orders = [at(18, 'o18'), at(12, 'o12'), at(10, 'o10')];

  it('page by one cursor that holds where each list is', async () => {
    const sources = [fakeSource(charges), fakeSource(orders)];
    const first = await mergedPage(sources, undefined, 3);
    expect(first).toEqual({ rows: [at(20, 'c20'), at(18, 'o18'), at(15, 'c15')], next: 'c15,o18' });
    const second = await mergedPage(sources, first.next!, 3);
    // One instant in both lists: the first list's row first.
    expect(second).toEqual({ rows: [at(12, 'o12'), at(10, 'c10'), at(10, 'o10')], next: 'c10,o10' });
    const last = await mergedPage(sources, second.next!, 3);
    expect(last).toEqual({ rows: [at(5, 'c5')], next: null });
  });

  it('keep the cursor of a list none of whose rows were shown', async () => {
    const sources = [fakeSource([at(1, 'old')]), fakeSource(orders)];
    const first = await mergedPage(sources, undefined, 2);
    expect(first).toEqual({ rows: [at(18, 'o18'), at(12, 'o12')], next: ',o12' });
    expect(await mergedPage(sources, first.next!, 2)).toEqual({ rows: [at(10, 'o10'), at(1, 'old')], next: null });
  });

  it('stream every row in the same order, a page of each list at a time', async () => {
    const reads: Array<[number, string | undefined]> = [];
    const rows: Row[] = [];
    for await (const row of mergedRows([fakeSource(charges, reads), fakeSource(orders)])) rows.push(row);
    expect(rows.map((row) => row.name)).toEqual(['c20', 'o18', 'c15', 'o12', 'c10', 'o10', 'c5']);
    expect(reads).toEqual([[100, undefined]]);
  });

  it('read one list a page at a time until it has no more', async () => {
    const reads: Array<[number, string | undefined]> = [];
    const rows: string[] = [];
    for await (const row of everyRow(fakeSource(charges, reads), 3)) rows.push(row.name);
    expect(rows).toEqual(['c20', 'c15', 'c10', 'c5']);
    expect(reads).toEqual([
      [3, undefined],
      [3, 'c10'],
    ]);
  });
});
