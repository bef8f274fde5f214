import type { InvoiceStatus, PortalLocale, ProductInterval, SubscriptionStatus } from '@billing/contracts';
import { languageOf } from '@billing/service';

/**
 * The session's `locale` when the merchant set one, else the browser's Accept-Language (its
 * first Chinese or English range by weight), else English.
 */
export function localeFor(sessionLocale: PortalLocale | null, acceptLanguage: string | undefined): PortalLocale {
  return sessionLocale ?? languageOf(acceptLanguage) ?? 'en';
}

/** Dates as customers in Taiwan read them: the calendar day in Taipei. */
export function formatDate(iso: string, locale: PortalLocale): string {
  return new Date(iso).toLocaleDateString(locale === 'zh-TW' ? 'zh-TW' : 'en-GB', {
    timeZone: 'Asia/Taipei',
    year: 'numeric',
    month: locale === 'zh-TW' ? 'long' : 'short',
    day: 'numeric',
  });
}

const UNIT = {
  en: { day: 'day', week: 'week', month: 'month', year: 'year' },
  'zh-TW': { day: '天', week: '週', month: '個月', year: '年' },
} as const;

const EVERY_ONE_ZH: Record<ProductInterval, string> = { day: '每天', week: '每週', month: '每月', year: '每年' };

export function billingPeriod(locale: PortalLocale, interval: ProductInterval, count: number): string {
  if (locale === 'zh-TW') return count === 1 ? EVERY_ONE_ZH[interval] : `每 ${count} ${UNIT['zh-TW'][interval]}`;
  return count === 1 ? `per ${interval}` : `every ${count} ${UNIT.en[interval]}s`;
}

const SUBSCRIPTION_STATUS: Record<PortalLocale, Record<SubscriptionStatus, string>> = {
  en: { ACTIVE: 'Active', TRIAL: 'Trial', PAST_DUE: 'Past due', CANCELED: 'Canceled' },
  'zh-TW': { ACTIVE: '使用中', TRIAL: '試用中', PAST_DUE: '付款逾期', CANCELED: '已取消' },
} as Record<PortalLocale, Record<SubscriptionStatus, string>>;

const INVOICE_STATUS: Record<PortalLocale, Record<InvoiceStatus, string>> = {
  en: { draft: 'Draft', open: 'Due', paid: 'Paid', void: 'Void', uncollectible: 'Uncollectible' },
  'zh-TW': { draft: '草稿', open: '待付款', paid: '已付款', void: '已作廢', uncollectible: '無法收款' },
};

export const subscriptionStatusText = (locale: PortalLocale, status: SubscriptionStatus) =>
  SUBSCRIPTION_STATUS[locale][status] ?? status;
export const invoiceStatusText = (locale: PortalLocale, status: InvoiceStatus) => INVOICE_STATUS[locale][status];

const BRANDS: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  jcb: 'JCB',
  unionpay: 'UnionPay',
  discover: 'Discover',
};

/** A card brand as printed on cards: `visa` is Visa. */
export const brandName = (brand: string) => BRANDS[brand.toLowerCase()] ?? brand;

/** Every sentence of the portal, in both languages. */
const MESSAGES = {
  en: {
    title: 'Billing',
    manageTitle: 'Manage your subscription',
    signedInAs: (email: string) => `Signed in as ${email}`,
    back: 'Return',
    backTo: (name: string) => `Back to ${name}`,
    subscriptions: 'Subscriptions',
    noSubscriptions: 'You have no subscriptions.',
    nextBilling: 'Next payment',
    amountDue: 'Amount due',
    nextBillingValue: (amount: string, date: string) => `${amount} on ${date}`,
    trialEnds: 'Trial ends',
    cancelsOn: 'Ends on',
    canceledOn: 'Canceled on',
    pendingCancel: (date: string) => `Your subscription ends on ${date}. You keep access until then.`,
    pastDue: 'Your last payment failed. Update your card and we will try again at once.',
    scheduledSwitch: (plan: string, date: string) => `Switches to ${plan} on ${date}.`,
    cancel: 'Cancel subscription',
    resume: 'Keep subscription',
    updateCard: 'Update card',
    switchPlan: 'Change plan',
    paymentMethod: 'Payment method',
    noCard: 'No card on file.',
    cardOnFile: (brand: string, last4: string, month: number, year: number) =>
      `${brand} ending in ${last4}, expires ${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`,
    invoices: 'Invoice history',
    noInvoices: 'No invoices yet.',
    invoiceNumber: 'Invoice',
    date: 'Date',
    amount: 'Amount',
    status: 'Status',
    receipt: 'Receipt',
    payment: (amount: string) => amount,
    cancelConfirmTitle: 'Cancel your subscription?',
    cancelAtPeriodEnd: (date: string) =>
      `Your subscription stays active until ${date}; after that you will not be charged again.`,
    cancelNow: 'Your subscription ends now and you lose access at once. Nothing is refunded.',
    confirmCancel: 'Cancel subscription',
    confirmCancelNow: 'Cancel now',
    keep: 'Go back',
    noticeCanceled: 'Your subscription has been canceled.',
    noticeCanceling: (date: string) => `Your subscription will end on ${date}.`,
    noticeResumed: 'Your subscription continues. Thank you for staying!',
    noticeCardUpdated: 'Your card has been updated.',
    noticeCardPaid: 'Your card has been updated and the overdue invoice is paid.',
    noticeSwitched: 'Your plan has been changed.',
    noticeScheduled: 'Your plan change is scheduled.',
    noticeScheduleCanceled: 'The scheduled plan change was canceled.',
    expiredTitle: 'This link has expired',
    expiredMessage: 'For your security, billing links work for one hour. Please return and open it again.',
    invalidTitle: 'Link not valid',
    invalidMessage: 'This billing link is not valid.',
    forbiddenTitle: 'Please try again',
    forbiddenMessage: 'This form was out of date. Please reload the page and try again.',
    notAllowed: 'This change is not available.',
    receiptTitle: (number: string) => `Receipt ${number}`,
    receiptPaidOn: (date: string) => `Paid on ${date}`,
    billedTo: 'Billed to',
    subtotal: 'Subtotal',
    discount: 'Discount',
    total: 'Total',
    amountPaid: 'Amount paid',
    refunded: 'Refunded',
    print: 'Print',
    period: (from: string, to: string) => `${from} – ${to}`,
    cardTitle: 'Update your card',
    cardIntro: 'Your new card is charged for future payments.',
    cardRetry: (amount: string) => `The overdue payment of ${amount} is charged to it at once.`,
    cardNumber: 'Card number',
    expiry: 'Expiry (MM/YY)',
    cvc: 'CVC',
    saveCard: 'Save card',
    sandboxCard: 'Sandbox: use test card 4242 4242 4242 4242, any future expiry and any CVC.',
    cardDeclined: 'Your card was declined. Please use another card.',
    paymentPending:
      'Your payment is being confirmed with the bank. Nothing more will be charged; please look again in a few minutes.',
    cardRetryFailed: 'Your card was saved, but the overdue payment was declined. Please use another card.',
    checkFields: (fields: string) => `Please check: ${fields}`,
    switchTitle: 'Change plan',
    currentPlan: 'Current plan',
    choosePlan: 'Choose',
    noPlans: 'No other plans are available.',
    previewTitle: 'Confirm your new plan',
    credit: 'Credit for unused time',
    charge: 'Charge for the new plan',
    net: 'Due now',
    effective: 'Takes effect',
    confirmSwitch: 'Confirm change',
    cancelSchedule: 'Cancel scheduled change',
    switchFrom: 'Now',
    switchTo: 'New plan',
    switchNow: 'Your new plan starts today.',
    switchScheduled: (date: string) =>
      `Your new plan starts on ${date}, at the end of the period you paid for. Nothing is charged now.`,
    switchBalance: (amount: string) => `${amount} is credited to your account and taken off your next invoices.`,
    switchCharged: (amount: string) => `${amount} is charged to your card on file now.`,
    switchBlocked: {
      past_due: 'Pay the overdue invoice before changing plans.',
      canceled: 'This subscription has ended.',
      cancel_at_period_end: 'Keep your subscription first to change its plan.',
      pending_schedule: 'A plan change is already scheduled. Cancel it first.',
      switch_in_progress: 'A plan change is under way. Please try again in a moment.',
      no_payment_method: 'Add a card first: this change is charged now.',
    } as Record<string, string>,
    perPeriod: (amount: string, period: string) => `${amount} ${period}`,
    poweredBy: 'Secure billing portal',
    privacy: 'Privacy policy',
    terms: 'Terms of service',
  },
  'zh-TW': {
    title: '帳單',
    manageTitle: '管理您的訂閱',
    signedInAs: (email: string) => `登入身分：${email}`,
    back: '返回',
    backTo: (name: string) => `返回 ${name}`,
    subscriptions: '訂閱',
    noSubscriptions: '您目前沒有訂閱。',
    nextBilling: '下次付款',
    amountDue: '應付金額',
    nextBillingValue: (amount: string, date: string) => `${date} 扣款 ${amount}`,
    trialEnds: '試用結束',
    cancelsOn: '結束日期',
    canceledOn: '取消日期',
    pendingCancel: (date: string) => `您的訂閱將於 ${date} 結束，在此之前仍可繼續使用。`,
    pastDue: '上次付款失敗。請更新信用卡，我們會立即重新扣款。',
    scheduledSwitch: (plan: string, date: string) => `將於 ${date} 改為 ${plan}。`,
    cancel: '取消訂閱',
    resume: '繼續訂閱',
    updateCard: '更新信用卡',
    switchPlan: '變更方案',
    paymentMethod: '付款方式',
    noCard: '尚未儲存信用卡。',
    cardOnFile: (brand: string, last4: string, month: number, year: number) =>
      `${brand} 末四碼 ${last4}，有效期限 ${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`,
    invoices: '帳單紀錄',
    noInvoices: '目前沒有帳單。',
    invoiceNumber: '帳單編號',
    date: '日期',
    amount: '金額',
    status: '狀態',
    receipt: '收據',
    payment: (amount: string) => amount,
    cancelConfirmTitle: '確定要取消訂閱嗎？',
    cancelAtPeriodEnd: (date: string) => `您的訂閱將持續到 ${date}，之後不會再扣款。`,
    cancelNow: '您的訂閱將立即結束並停止使用，已付款項不予退還。',
    confirmCancel: '確認取消訂閱',
    confirmCancelNow: '立即取消',
    keep: '返回',
    noticeCanceled: '您的訂閱已取消。',
    noticeCanceling: (date: string) => `您的訂閱將於 ${date} 結束。`,
    noticeResumed: '您的訂閱將繼續，感謝您的支持！',
    noticeCardUpdated: '您的信用卡已更新。',
    noticeCardPaid: '您的信用卡已更新，逾期帳單已付清。',
    noticeSwitched: '您的方案已變更。',
    noticeScheduled: '您的方案變更已排定。',
    noticeScheduleCanceled: '已取消排定的方案變更。',
    expiredTitle: '此連結已過期',
    expiredMessage: '為了您的安全，帳單連結僅在一小時內有效。請返回後重新開啟。',
    invalidTitle: '連結無效',
    invalidMessage: '此帳單連結無效。',
    forbiddenTitle: '請再試一次',
    forbiddenMessage: '此表單已過期，請重新整理頁面後再試一次。',
    notAllowed: '無法進行此變更。',
    receiptTitle: (number: string) => `收據 ${number}`,
    receiptPaidOn: (date: string) => `付款日期 ${date}`,
    billedTo: '帳單寄送至',
    subtotal: '小計',
    discount: '折扣',
    total: '總計',
    amountPaid: '已付金額',
    refunded: '已退款',
    print: '列印',
    period: (from: string, to: string) => `${from} – ${to}`,
    cardTitle: '更新信用卡',
    cardIntro: '之後的款項將由新的信用卡支付。',
    cardRetry: (amount: string) => `逾期的 ${amount} 將立即以此卡扣款。`,
    cardNumber: '卡號',
    expiry: '有效期限 (MM/YY)',
    cvc: '安全碼',
    saveCard: '儲存信用卡',
    sandboxCard: '測試環境：請使用測試卡號 4242 4242 4242 4242，任一未來到期日及任一安全碼。',
    cardDeclined: '您的信用卡遭拒，請改用其他信用卡。',
    paymentPending: '您的付款正在向銀行確認中，不會重複扣款，請幾分鐘後再查看。',
    cardRetryFailed: '您的信用卡已儲存，但逾期款項扣款失敗，請改用其他信用卡。',
    checkFields: (fields: string) => `請檢查：${fields}`,
    switchTitle: '變更方案',
    currentPlan: '目前方案',
    choosePlan: '選擇',
    noPlans: '沒有其他可選的方案。',
    previewTitle: '確認新方案',
    credit: '未使用期間折抵',
    charge: '新方案費用',
    net: '本次應付',
    effective: '生效日期',
    confirmSwitch: '確認變更',
    cancelSchedule: '取消排定的變更',
    switchFrom: '目前',
    switchTo: '新方案',
    switchNow: '新方案今天開始生效。',
    switchScheduled: (date: string) => `新方案將於 ${date}（目前已付費期間結束時）生效，現在不會扣款。`,
    switchBalance: (amount: string) => `${amount} 將存入您的帳戶餘額，並從之後的帳單中扣抵。`,
    switchCharged: (amount: string) => `將立即以您的信用卡扣款 ${amount}。`,
    switchBlocked: {
      past_due: '請先付清逾期帳單再變更方案。',
      canceled: '此訂閱已結束。',
      cancel_at_period_end: '請先繼續訂閱，才能變更方案。',
      pending_schedule: '已有排定的方案變更，請先取消。',
      switch_in_progress: '方案變更處理中，請稍後再試。',
      no_payment_method: '此變更需立即付款，請先新增信用卡。',
    } as Record<string, string>,
    perPeriod: (amount: string, period: string) => `${amount} ${period}`,
    poweredBy: '安全的帳單入口',
    privacy: '隱私權政策',
    terms: '服務條款',
  },
} as const;

export type Messages = (typeof MESSAGES)['en'];
export const messagesFor = (locale: PortalLocale): Messages => MESSAGES[locale] as unknown as Messages;
