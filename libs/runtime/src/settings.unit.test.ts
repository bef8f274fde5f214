import { positiveNumberSetting } from './settings';

describe('positiveNumberSetting', () => {
  it('reads a positive number, and falls back when the setting is unset, zero, negative or not a number', () => {
    const config = { GOOD: '250', ZERO: '0', NEGATIVE: '-5', WORD: 'soon' };
    expect(positiveNumberSetting(config, 'GOOD', 30)).toBe(250);
    for (const name of ['ZERO', 'NEGATIVE', 'WORD', 'UNSET']) expect(positiveNumberSetting(config, name, 30)).toBe(30);
  });
});
