import { findTextProblems, isLineKey, textProblem } from './text-guard';

describe('textProblem', () => {
  it.each([
    ['a\u0000b', 'text', /NUL character \(U\+0000\)/],
    ['\uD800', 'text', /lone UTF-16 surrogate \(U\+D800\)/],
    ['x\uDC00', 'text', /lone UTF-16 surrogate \(U\+DC00\)/],
    ['bell\u0007', 'text', /control character \(U\+0007\)/],
    ['del\u007F', 'text', /control character \(U\+007F\)/],
    ['c1\u0085', 'text', /control character \(U\+0085\)/],
    ['two\nlines', 'line', /single line .*U\+000A/],
    ['tab\there', 'line', /single line .*U\+0009/],
  ] as const)('refuses %j as %s', (value, kind, message) => {
    expect(textProblem(value, kind)).toMatch(message);
  });

  it.each([
    ['Mei Lin', 'line'],
    ['陳美玲 👩🏻‍💻', 'line'],
    ['first line\nsecond\r\n\tindented', 'text'],
    ['', 'line'],
  ] as const)('accepts %j as %s', (value, kind) => {
    expect(textProblem(value, kind)).toBeNull();
  });
});

describe('findTextProblems', () => {
  it('names each refused string by its dotted path; ids and names are single-line, descriptions are not', () => {
    const body = {
      name: 'Mei\nLin',
      description: 'line one\nline two',
      product_id: 'prod_\u0000',
      productIds: ['ok', 'bad\t'],
      metadata: { order_id: 'multi\nline is fine here', note: '\uDBFF' },
      nested: { deeper: [{ email: 'a@b.c\r' }] },
    };
    expect(findTextProblems(body).map((d) => `${d.path}: ${d.code}`)).toEqual([
      'metadata.note: invalid_characters',
      'name: invalid_characters',
      'nested.deeper.0.email: invalid_characters',
      'product_id: invalid_characters',
      'productIds.1: invalid_characters',
    ]);
  });

  it('checks keys, without echoing them', () => {
    const [problem] = findTextProblems({ metadata: { 'k\u0000': 'v' } });
    expect(problem).toEqual({
      path: 'metadata',
      code: 'invalid_characters',
      message: 'has a key that contains a NUL character (U+0000)',
    });
  });

  it('takes every value as one line when asked (query strings)', () => {
    expect(findTextProblems({ description: 'a\nb', list: ['x', 'y\r'] }, { kind: 'line' }).map((d) => d.path)).toEqual([
      'description',
      'list.1',
    ]);
  });

  it('refuses nesting deeper than 32 levels without recursion', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findTextProblems({ a: deep })).toEqual([expect.objectContaining({ code: 'too_deep' })]);
  });

  it('says which keys hold one line', () => {
    for (const key of ['id', 'product_id', 'product_ids', 'productId', 'name', 'customer_email', 'success_url', 'code'])
      expect([key, isLineKey(key)]).toEqual([key, true]);
    for (const key of ['description', 'message', 'valid', 'paid', 'note'])
      expect([key, isLineKey(key)]).toEqual([key, false]);
  });
});
