import { type Html, type PageLanguage, html, languageOf } from '@billing/service';
import type { Request, Response } from 'express';
import { readCookie, setCookie } from './auth';
import { ZH_TW } from './zh-tw';

/**
 * The dashboard speaks zh-TW or English: the user's choice (a cookie, set by the language link
 * in every page's header), else their browser's first (any `zh` is zh-TW), else English, as the
 * hosted pages answer a client that names no language (a script).
 */
export type DashboardLanguage = PageLanguage;

export const LANGUAGE_COOKIE = 'dashboard_lang';
const A_YEAR_S = 365 * 24 * 60 * 60;

export function languageOfRequest(req: Request): DashboardLanguage {
  const chosen = readCookie(req, LANGUAGE_COOKIE);
  if (chosen === 'zh-TW' || chosen === 'en') return chosen;
  return languageOf(req.get('accept-language')) ?? 'en';
}

export function rememberLanguage(req: Request, res: Response, language: DashboardLanguage): void {
  setCookie(req, res, LANGUAGE_COOKIE, language, A_YEAR_S);
}

/**
 * `t('Customers')`: the dashboard's words in the user's language. The English text is the key
 * (and the English page); `{name}` in it is filled from `values` after translation. Text with no
 * translation yet stays English rather than breaking the page. A word English uses for two
 * things that Chinese tells apart carries what it means after a `|` (`Name|person`: 姓名, where
 * `Name` is 名稱), which English leaves out.
 */
export type Translate = (english: string, values?: Record<string, string | number>) => string;

export function translator(language: DashboardLanguage): Translate {
  const words = language === 'zh-TW' ? ZH_TW : undefined;
  return (english, values) => fill(words?.[english] ?? withoutMeaning(english), values);
}

const withoutMeaning = (english: string) => english.split('|', 1)[0]!;

const fill = (text: string, values: Record<string, string | number> | undefined) =>
  values ? text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole)) : text;

/**
 * `t` for words with HTML among them (a link, a time, a code): the translated words escaped,
 * each `{name}` replaced by its value, an `Html` value as it is. One key per sentence, so that
 * a translation may put the link where its language wants it.
 */
export function markup(t: Translate, english: string, values: Record<string, Html | string | number>): Html {
  const parts = t(english).split(/\{(\w+)\}/);
  return html`${parts.map((part, i) => (i % 2 === 0 ? part : part in values ? values[part] : `{${part}}`))}`;
}
