import { type PageContext, type Receipt, renderMessagePage } from './render';

// The pages of a payment link's URL (`/pay/<url_id>`, `/thanks`, `/canceled`; the routes are in
// payment-links/routes.ts): what they say, and where they lead back to.

/** Why a link opens no checkout. */
export type LinkUnavailable = 'inactive' | 'soldOut' | 'productGone' | 'down';

const say = (
  page: PageContext,
  title: string,
  text: string,
  back?: { href: string; text: string },
  receipt?: Receipt,
) => renderMessagePage(title, text, back, { ...page, receipt });

/** The merchant's site if it gave one, else the link itself (a new visit only when followed). */
const backLink = (page: PageContext, linkUrl: string) => ({
  href: page.merchant?.website_url ?? linkUrl,
  text: page.merchant ? page.t.backTo(page.merchant.name) : page.t.backToShop,
});

/** An address that is no payment link. */
export const renderLinkNotFound = (page: PageContext): string =>
  say(page, page.t.titles.linkNotFound, page.t.texts.linkNotFound);

/** A link that cannot sell now: deactivated, sold out, its product gone, or checkout down. */
export function renderLinkUnavailable(page: PageContext, reason: LinkUnavailable): string {
  const { t } = page;
  const text = {
    inactive: t.texts.linkInactive,
    soldOut: t.texts.linkSoldOut,
    productGone: t.texts.linkProductGone,
    down: t.texts.linkDown,
  }[reason];
  return say(page, t.titles.linkUnavailable, text);
}

/**
 * Where a link without `success_url` lands after payment: the product, the amount paid and the
 * date of the paid session when it is known, and the way back when the link is.
 */
export function renderLinkThanks(page: PageContext, linkUrl: string | undefined, receipt?: Receipt): string {
  const back = linkUrl ? backLink(page, linkUrl) : undefined;
  return say(page, page.t.titles.thanks, page.t.texts.thanks, back, receipt);
}

/** Where "Cancel and return" of a link's checkout goes: back to the merchant, or to start again. */
export function renderLinkCanceled(page: PageContext, linkUrl: string): string {
  const back = page.merchant?.website_url ? backLink(page, linkUrl) : { href: linkUrl, text: page.t.startAgain };
  return say(page, page.t.titles.canceled, page.t.texts.canceled, back);
}
