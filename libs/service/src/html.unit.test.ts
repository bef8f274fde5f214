import { escapeHtml, formatTwd, languageOf } from './html';

describe('the pages’ shared kit', () => {
  it('escapes the five characters that matter in content and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>Tom & Jerry</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;',
    );
    expect(escapeHtml('山茶 NT$1')).toBe('山茶 NT$1');
  });

  it.each([
    [0, 'NT$0'],
    [299, 'NT$299'],
    [1299, 'NT$1,299'],
    [1234567, 'NT$1,234,567'],
    [-199, '−NT$199'],
    [-1500, '−NT$1,500'],
  ])('formats %p TWD as %p', (amount, text) => {
    expect(formatTwd(amount)).toBe(text);
  });

  it.each([
    [undefined, null],
    ['', null],
    ['fr-FR', null],
    ['zh-TW,zh;q=0.9,en;q=0.8', 'zh-TW'],
    ['zh-CN', 'zh-TW'],
    ['en-US,en;q=0.9', 'en'],
    ['fr;q=1, en;q=0.5, zh;q=0.8', 'zh-TW'],
    ['zh;q=0, en', 'en'],
    ['en;q=abc, zh-HK', 'zh-TW'],
    ['de, en-GB;q=0.7, zh;q=0.7', 'en'],
  ])('reads Accept-Language %p as %p', (header, language) => {
    expect(languageOf(header)).toBe(language);
  });
});
