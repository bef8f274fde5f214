import { csvCell } from './payments';

describe('a cell of the payments export', () => {
  it.each([
    ['plain text, as it is', 'Tea mug', 'Tea mug'],
    ['a number, as digits', 480, '480'],
    ['a comma, quoted', 'Leaf, Co', '"Leaf, Co"'],
    ['a quote, doubled inside quotes', 'the "best" mug', '"the ""best"" mug"'],
    ['a line break, quoted', 'two\nlines', '"two\nlines"'],
    ['a formula, made text', '=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['a leading plus, minus or at, made text', '-2+3', "'-2+3"],
    ['Chinese, as it is', '茶葉禮盒', '茶葉禮盒'],
  ] as const)('given %s', (_case, value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });
});
