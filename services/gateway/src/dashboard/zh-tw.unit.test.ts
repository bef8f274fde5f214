import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { html } from '@billing/service';
import { type Translate, markup, translator } from './i18n';
import { ZH_TW } from './zh-tw';

/** A text's `{name}` placeholders, in order of name. */
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();

/** The dashboard's sources (tests left out), each with its path. */
function sources(dir = __dirname): Array<{ path: string; code: string }> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')
      ? [{ path, code: readFileSync(path, 'utf8') }]
      : [];
  });
}

const literal = String.raw`'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"`;
/** `t('...')`, `ctx.t("...")` and `markup(t, '...')`: the English texts the sources translate as written. */
const TRANSLATED = new RegExp(String.raw`(?:\bt\(\s*|\bmarkup\(\s*[\w.]+,\s*)(?:${literal})`, 'g');

describe('the dashboard in zh-TW', () => {
  it('has, for every English text, non-empty words that keep exactly its placeholders', () => {
    const wrong = Object.entries(ZH_TW).filter(
      ([english, chinese]) => chinese.trim() === '' || placeholders(chinese).join() !== placeholders(english).join(),
    );
    expect(wrong).toEqual([]);
  });

  it('has words for every text the dashboard translates as it is written', () => {
    const texts = sources().flatMap(({ path, code }) =>
      [...code.matchAll(TRANSLATED)].map((match) => ({
        path,
        english: (match[1] ?? match[2]!).replace(/\\(.)/g, '$1'),
      })),
    );
    expect(texts.length).toBeGreaterThan(100);
    expect(texts.filter(({ english }) => !(english in ZH_TW))).toEqual([]);
  });

  it('fills placeholders after translating, and leaves English as it is', () => {
    const t = translator('zh-TW');
    expect(t('Product {name} created.', { name: 'Pro' })).toBe('已建立商品「Pro」。');
    expect(t('A text with no translation')).toBe('A text with no translation');
    expect(translator('en')('Product {name} created.', { name: 'Pro' })).toBe('Product Pro created.');
  });

  it('tells apart what one English word means: a person’s name is 姓名, a product’s 名稱', () => {
    expect([translator('zh-TW')('Name|person'), translator('zh-TW')('Name')]).toEqual(['姓名', '名稱']);
    expect([translator('en')('Name|person'), translator('en')('Name')]).toEqual(['Name', 'Name']);
  });

  it('puts HTML values where the translation has their placeholders, and escapes the rest', () => {
    const words: Record<string, string> = { 'Check the {settings} now.': '請立即檢查{settings}。' };
    const zh: Translate = (english) => words[english] ?? english;
    const link = html`<a href="/x">${'settings'}</a>`;
    expect(String(markup(zh, 'Check the {settings} now.', { settings: link }))).toBe(
      '請立即檢查<a href="/x">settings</a>。',
    );
    expect(String(markup(translator('en'), 'Check the {settings} now.', { settings: link }))).toBe(
      'Check the <a href="/x">settings</a> now.',
    );
    expect(String(markup(zh, '{name} for <{email}> {unknown}', { name: '<b>', email: 'a&b' }))).toBe(
      '&lt;b&gt; for &lt;a&amp;b&gt; {unknown}',
    );
  });
});
