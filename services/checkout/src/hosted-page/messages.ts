/** The hosted pages' languages: Traditional Chinese (Taiwan) and English. */
export const LOCALES = ['zh-TW', 'en'] as const;
import type { ApiError, Einvoice } from '@billing/contracts';
import { type EinvoiceField, formatTwd, languageOf } from '@billing/service';
export type Locale = (typeof LOCALES)[number];

type Interval = 'day' | 'week' | 'month' | 'year';

/** The text fields of the e-invoice section: one set per choice that needs them. */
export type { EinvoiceField };

/** Every text of the hosted pages, per language. */
export interface Messages {
  lang: Locale;
  email: string;
  name: string;
  cardNumber: string;
  expiry: string;
  cvc: string;
  pay: (amount: string) => string;
  confirmAndPay: (amount: string) => string;
  startTrial: (days: number) => string;
  cancel: string;
  sandbox: string;
  challenge: string;
  /** PAYUNi's card fields did not load or refused the card before anything was charged. */
  cardFieldsFailed: string;
  subtotal: string;
  total: string;
  dueToday: string;
  freeTrial: string;
  then: string;
  days: (n: number) => string;
  trialNote: string;
  /** A card saved through PAYUNi: verified by an authorisation of NT$1, given back at once. */
  payuniVerificationNote: string;
  /** "per month", "every 3 months" */
  period: (interval: Interval, count: number) => string;
  /** What is charged and when, in words. */
  todayThen: (today: string, then: string, period: string) => string;
  recurring: (price: string, period: string) => string;
  freeThen: (days: number, then: string, period: string) => string;
  oneTime: (price: string) => string;
  /** A CREDITS product's one-time payment and what it grants: the credits, and for how many days. */
  oneTimeCredits: (price: string, credits: string, days: number | null) => string;
  /**
   * A plan's allowance of credits for each paid period: reset at the period's end (or after
   * `days`, if sooner) unless it rolls over (then kept, or for `days` after each grant).
   */
  planCredits: (credits: string, rollover: boolean, days: number | null) => string;
  /** A plan's metered prices: usage billed in arrears on each renewal, one price per meter. */
  meteredPrices: (prices: Array<{ meter: string; price: string; packageSize: number }>) => string;
  checkFields: (fields: string) => string;
  alreadySubscribed: string;
  /** The promotion code field, when the merchant allows one (`allow_promotion_codes`), and the code applied. */
  promotion: {
    label: string;
    apply: string;
    remove: (code: string) => string;
    /** The applied code and its coupon's name (the merchant's words): "SPRING20 · Spring sale". */
    applied: (code: string, couponName: string) => string;
    required: string;
    /** Any refusal but "already used": the page says no more than a Publishable Key is told. */
    invalid: string;
    alreadyUsed: string;
    changesTrial: string;
    notOffered: string;
    /** Another window changed the code first. */
    changedMeanwhile: string;
    unavailable: string;
    /** The total moved after the page was shown (a code applied in another window): nothing charged. */
    totalChanged: (total: string) => string;
  };
  /** An ATM or convenience-store payment through the merchant's processor (docs/payments.md). */
  asyncPayment: {
    payBy: string;
    /** A card typed into the processor's fields on this page (PAYUNi). */
    card: string;
    /** A card typed on ECPay's own page. */
    cardOnEcpay: string;
    atm: string;
    cvs: string;
    /** The processor's name as buyers know it. */
    processors: Record<'ecpay' | 'payuni', string>;
    continue: (processor: string) => string;
    redirecting: (processor: string) => string;
    atmTitle: string;
    cvsTitle: string;
    bankCode: string;
    account: string;
    paymentCode: string;
    amount: string;
    payBefore: string;
    waitingNote: string;
    sandbox: (processor: string) => string;
    confirmingTitle: string;
    confirming: (processor: string) => string;
  };
  /** The page of an invoice paid by transfer through ECPay, where the buyer gets the account or code. */
  invoicePayment: {
    title: string;
    intro: (method: 'atm' | 'cvs') => string;
    getAtm: string;
    getCvs: string;
    renewal: string;
    waitingNote: string;
    paidTitle: string;
    paid: string;
    expiredTitle: string;
    expired: string;
    waitingTitle: string;
    waiting: string;
  };
  declines: Record<string, string>;
  titles: Record<
    | 'notFound'
    | 'expired'
    | 'alreadyPaid'
    | 'refunded'
    | 'inProgress'
    | 'thanks'
    | 'canceled'
    | 'linkNotFound'
    | 'linkUnavailable'
    | 'paymentsUnavailable',
    string
  >;
  texts: {
    notFound: string;
    expired: string;
    alreadyPaid: string;
    refunded: string;
    refundedDuplicate: string;
    inProgress: string;
    thanks: string;
    canceled: string;
    linkNotFound: string;
    linkInactive: string;
    linkSoldOut: string;
    linkProductGone: string;
    linkDown: string;
  };
  /** The e-invoice (電子發票) the buyer chooses on the page, and the receipt's line about it. */
  einvoice: {
    title: string;
    choices: Record<Einvoice['type'], string>;
    memberHint: string;
    fields: Record<EinvoiceField, string>;
    /** What a field must hold, said when it did not ('type': no choice the page offers). */
    rules: Record<EinvoiceField | 'type', string>;
    /** Above the form when the section was refused. */
    invalid: string;
    number: string;
    randomCode: string;
    /** After the number of a voided (作廢) e-invoice. */
    voided: string;
    /** Not issued yet: where it will go, the carrier in words. */
    issuedTo: (choice: Einvoice) => string;
  };
  product: string;
  amountPaid: string;
  date: string;
  backTo: (merchant: string) => string;
  backToShop: string;
  startAgain: string;
}

const EN_UNITS: Record<Interval, string> = { day: 'day', week: 'week', month: 'month', year: 'year' };
const ZH_UNITS: Record<Interval, string> = { day: '天', week: '週', month: '個月', year: '年' };
const ZH_EVERY_ONE: Record<Interval, string> = { day: '每天', week: '每週', month: '每月', year: '每年' };

const en: Messages = {
  lang: 'en',
  email: 'Email',
  name: 'Name',
  cardNumber: 'Card number',
  expiry: 'Expiry (MM/YY)',
  cvc: 'CVC',
  pay: (amount) => `Pay ${amount}`,
  confirmAndPay: (amount) => `Confirm and pay ${amount}`,
  startTrial: (days) => `Start ${days}-day free trial`,
  cancel: 'Cancel and return',
  sandbox: 'Sandbox: pay with test card 4242 4242 4242 4242, any future expiry and any CVC.',
  challenge: 'Your bank asks you to confirm this payment.',
  cardFieldsFailed: 'The card could not be read. Nothing was charged. Check it and try again.',
  subtotal: 'Subtotal',
  total: 'Total',
  dueToday: 'Due today',
  freeTrial: 'Free trial',
  then: 'Then',
  days: (n) => `${n} days`,
  trialNote: 'Your card is saved now and first charged when the trial ends. Cancel before then and nothing is charged.',
  payuniVerificationNote: 'To check the card, PAYUNi authorises NT$1 on it now and gives it back at once.',
  period: (interval, count) => (count === 1 ? `per ${EN_UNITS[interval]}` : `every ${count} ${EN_UNITS[interval]}s`),
  todayThen: (today, then, period) => `${today} today, then ${then} ${period}`,
  recurring: (price, period) => `${price} ${period}`,
  freeThen: (days, then, period) => `Free for ${days} days, then ${then} ${period}`,
  oneTime: (price) => `${price}, one-time payment`,
  oneTimeCredits: (price, credits, days) =>
    `${price}, one-time payment, for ${credits} credits${days === null ? '' : ` valid for ${days} days`}`,
  meteredPrices: (prices) =>
    `Usage is billed after each period: ${prices
      .map(({ meter, price, packageSize }) =>
        packageSize === 1 ? `${meter} ${price} each` : `${meter} ${price} per ${packageSize.toLocaleString('en-US')}`,
      )
      .join('; ')}`,
  planCredits: (credits, rollover, days) => {
    const each = `Includes ${credits} credits each paid period`;
    if (rollover)
      return days === null ? `${each}; unused credits carry over` : `${each}, each grant valid for ${days} days`;
    return days === null
      ? `${each}; unused credits expire when the period ends`
      : `${each}; unused credits expire when the period ends or after ${days} days, whichever is sooner`;
  },
  checkFields: (fields) => `Please check: ${fields}`,
  alreadySubscribed:
    'This email already has a subscription to this product. Nothing was charged. Use another email, or manage the subscription you have.',
  promotion: {
    label: 'Promotion code',
    apply: 'Apply',
    remove: (code) => `Remove ${code}`,
    applied: (code, couponName) => `${code} · ${couponName}`,
    required: 'Enter a promotion code.',
    invalid: 'This code cannot be used for this purchase. Check it and try again.',
    alreadyUsed: 'You have already used this code.',
    changesTrial: 'This code changes the free trial, so it cannot be applied to this checkout.',
    notOffered: 'This checkout does not take promotion codes.',
    changedMeanwhile: 'The code of this checkout was changed in another window. Check the total and try again.',
    unavailable: 'Promotion codes cannot be checked right now. Nothing was charged. Try again in a moment.',
    totalChanged: (total) => `The total is now ${total}. Nothing was charged. Check it and pay again.`,
  },
  asyncPayment: {
    payBy: 'Pay by',
    card: 'Card',
    cardOnEcpay: "Card, on ECPay's secure page",
    atm: 'ATM transfer (virtual account)',
    cvs: 'Convenience-store payment code',
    processors: { ecpay: 'ECPay', payuni: 'PAYUNi' },
    continue: (processor) => `Continue to ${processor}`,
    redirecting: (processor) => `Taking you to ${processor} for your payment details…`,
    atmTitle: 'Transfer to this account',
    cvsTitle: 'Pay with this code at a convenience store',
    bankCode: 'Bank code',
    account: 'Account number',
    paymentCode: 'Payment code',
    amount: 'Amount',
    payBefore: 'Pay before',
    waitingNote: 'Your order completes when the payment arrives. Nothing else is charged.',
    sandbox: (processor) => `Sandbox: this goes to ${processor}'s test environment; no real money moves.`,
    confirmingTitle: 'Confirming your payment',
    confirming: (processor) =>
      `${processor} is confirming your payment. Reload this page in a moment; nothing more is charged.`,
  },
  invoicePayment: {
    title: 'Pay your invoice',
    intro: (method) =>
      method === 'atm'
        ? "Your subscription's invoice is paid by ATM transfer. ECPay gives you the account on its page."
        : "Your subscription's invoice is paid with a convenience-store code. ECPay gives you the code on its page.",
    getAtm: 'Get an ATM account at ECPay',
    getCvs: 'Get a store payment code at ECPay',
    renewal: 'Subscription renewal',
    waitingNote: 'Your invoice is paid when the payment arrives. Nothing else is charged.',
    paidTitle: 'Paid',
    paid: 'ECPay has received your payment. Thank you.',
    expiredTitle: 'This payment has expired',
    expired: 'Its deadline has passed. The shop will send you a new one.',
    waitingTitle: 'Waiting for ECPay',
    waiting:
      "You were sent to ECPay for your payment details; they appear here once ECPay sends them. If you left ECPay's page before it showed them, contact the shop.",
  },
  declines: {
    card_declined: 'Your card was declined.',
    insufficient_funds: 'Your card has insufficient funds.',
    expired_card: 'Your card has expired.',
    incorrect_number: 'Your card number is incorrect.',
    invalid_expiry: "Your card's expiration date is in the past.",
    incorrect_cvc: "Your card's security code is incorrect.",
    authentication_failed: 'The card authentication (3-D Secure) failed.',
    processor_not_configured: 'This shop cannot take payments yet. Nothing was charged. Please contact the merchant.',
    processor_unavailable:
      'This shop cannot take payments right now. Nothing was charged. Please contact the merchant.',
  },
  titles: {
    notFound: 'Checkout not found',
    expired: 'Checkout expired',
    alreadyPaid: 'Already paid',
    refunded: 'Payment refunded',
    inProgress: 'Payment in progress',
    thanks: 'Thank you',
    canceled: 'Checkout canceled',
    linkNotFound: 'Link not found',
    linkUnavailable: 'Payment link unavailable',
    paymentsUnavailable: 'Payments unavailable',
  },
  texts: {
    notFound: 'This checkout link is not valid.',
    expired: 'This checkout has expired. Please start again.',
    alreadyPaid: 'This checkout has been paid. Nothing more is charged.',
    refunded: 'This payment was refunded in full.',
    refundedDuplicate: 'This email already had a subscription to this product, so this payment was refunded in full.',
    inProgress: 'This checkout is being paid in another window.',
    thanks: 'Your payment was received.',
    canceled: 'You left the checkout. Nothing was charged.',
    linkNotFound: 'This payment link is not valid.',
    linkInactive: 'This payment link is no longer active.',
    linkSoldOut: 'This payment link has reached its limit of purchases.',
    linkProductGone: 'The product of this payment link is no longer available.',
    linkDown: 'This payment link cannot open a checkout right now. Please try again later.',
  },
  einvoice: {
    title: 'E-invoice',
    choices: {
      MEMBER: 'Member carrier',
      MOBILE_BARCODE: 'Mobile barcode',
      CITIZEN_CERTIFICATE: 'Citizen digital certificate',
      DONATION: 'Donate the invoice',
      B2B: 'Company (tax ID number)',
    },
    memberHint: 'Kept under your email address; you get a notice there when it is issued.',
    fields: {
      barcode: 'Barcode',
      certificate: 'Certificate number',
      donation_code: 'Donation code',
      tax_id: 'Tax ID number (統一編號)',
      company_name: 'Company title (optional)',
    },
    rules: {
      type: 'Choose how to receive the e-invoice.',
      barcode: 'A mobile barcode is "/" and 7 characters (digits, capital letters, . + -), such as /ABC1234.',
      certificate: 'A certificate number is 2 capital letters and 14 digits.',
      donation_code: 'A donation code is 3 to 7 digits.',
      tax_id: 'A tax ID number is 8 digits with a valid check digit. Please check it.',
      company_name: 'The company title is at most 255 characters.',
    },
    invalid: 'Please check the e-invoice details. Nothing was charged.',
    number: 'E-invoice number',
    randomCode: 'Random code',
    voided: ' (voided)',
    issuedTo: (choice) => {
      switch (choice.type) {
        case 'MEMBER':
          return 'To be issued to your member carrier';
        case 'MOBILE_BARCODE':
          return `To be issued to mobile barcode ${choice.carrier}`;
        case 'CITIZEN_CERTIFICATE':
          return `To be issued to citizen certificate ${choice.carrier}`;
        case 'DONATION':
          return `To be donated (donation code ${choice.donation_code})`;
        case 'B2B':
          return `To be issued to tax ID number ${choice.tax_id}`;
      }
    },
  },
  product: 'Product',
  amountPaid: 'Amount paid',
  date: 'Date',
  backTo: (merchant) => `Back to ${merchant}`,
  backToShop: 'Return to the shop',
  startAgain: 'Start again',
};

const zhTW: Messages = {
  lang: 'zh-TW',
  email: '電子郵件',
  name: '姓名',
  cardNumber: '信用卡號',
  expiry: '有效期限 (MM/YY)',
  cvc: '安全碼',
  pay: (amount) => `付款 ${amount}`,
  confirmAndPay: (amount) => `確認並付款 ${amount}`,
  startTrial: (days) => `開始 ${days} 天免費試用`,
  cancel: '取消並返回',
  sandbox: '測試環境：請使用測試卡號 4242 4242 4242 4242，任一未來的有效期限與任一安全碼。',
  challenge: '您的銀行要求確認這筆付款。',
  cardFieldsFailed: '無法讀取這張卡，未收取任何費用。請檢查後再試一次。',
  subtotal: '小計',
  total: '總計',
  dueToday: '今日應付',
  freeTrial: '免費試用',
  then: '之後',
  days: (n) => `${n} 天`,
  trialNote: '現在只會儲存您的卡片，試用期結束時才首次扣款。在此之前取消則不收取任何費用。',
  payuniVerificationNote: '為驗證卡片，統一金流（PAYUNi）會先授權 NT$1，並隨即退還。',
  period: (interval, count) => (count === 1 ? ZH_EVERY_ONE[interval] : `每 ${count} ${ZH_UNITS[interval]}`),
  todayThen: (today, then, period) => `今天 ${today}，之後${period} ${then}`,
  recurring: (price, period) => `${period} ${price}`,
  freeThen: (days, then, period) => `前 ${days} 天免費，之後${period} ${then}`,
  oneTime: (price) => `${price}，一次付清`,
  oneTimeCredits: (price, credits, days) =>
    `${price}，一次付清，含 ${credits} 點${days === null ? '' : `，${days} 天內有效`}`,
  meteredPrices: (prices) =>
    `每期結束後另依用量計費：${prices
      .map(({ meter, price, packageSize }) =>
        packageSize === 1
          ? `${meter} 每單位 ${price}`
          : `${meter} 每 ${packageSize.toLocaleString('en-US')} 單位 ${price}`,
      )
      .join('；')}`,
  planCredits: (credits, rollover, days) => {
    const each = `每個付費週期含 ${credits} 點`;
    if (rollover) return days === null ? `${each}，未用完的點數可累積` : `${each}，每次發放的點數 ${days} 天內有效`;
    return days === null
      ? `${each}，未用完的點數於該週期結束時失效`
      : `${each}，未用完的點數於該週期結束或 ${days} 天後失效（以先到者為準）`;
  },
  checkFields: (fields) => `請檢查：${fields}`,
  alreadySubscribed: '此電子郵件已訂閱這項商品，未收取任何費用。請使用其他電子郵件，或管理您現有的訂閱。',
  promotion: {
    label: '優惠碼',
    apply: '套用',
    remove: (code) => `移除 ${code}`,
    applied: (code, couponName) => `${code} · ${couponName}`,
    required: '請輸入優惠碼。',
    invalid: '此優惠碼無法用於這筆訂單，請確認後再試一次。',
    alreadyUsed: '您已使用過此優惠碼。',
    changesTrial: '此優惠碼會變更免費試用期，無法用於這筆結帳。',
    notOffered: '這筆結帳不接受優惠碼。',
    changedMeanwhile: '這筆結帳的優惠碼已在另一個視窗變更，請確認總計後再試一次。',
    unavailable: '目前無法確認優惠碼，未收取任何費用。請稍後再試。',
    totalChanged: (total) => `總計已變更為 ${total}，未收取任何費用。請確認後再付款。`,
  },
  asyncPayment: {
    payBy: '付款方式',
    card: '信用卡',
    cardOnEcpay: '信用卡（綠界安全付款頁）',
    atm: 'ATM 轉帳（虛擬帳號）',
    cvs: '超商代碼繳費',
    processors: { ecpay: '綠界', payuni: '統一金流' },
    continue: (processor) => `前往${processor}付款`,
    redirecting: (processor) => `正在前往${processor}取得繳費資訊…`,
    atmTitle: '請轉帳至此帳號',
    cvsTitle: '請持此代碼至超商繳費',
    bankCode: '銀行代碼',
    account: '帳號',
    paymentCode: '繳費代碼',
    amount: '金額',
    payBefore: '繳費期限',
    waitingNote: '款項入帳後訂單即完成，不會另外收費。',
    sandbox: (processor) => `測試環境：款項在${processor}測試環境處理，不會有實際金流。`,
    confirmingTitle: '付款確認中',
    confirming: (processor) => `${processor}正在確認您的付款，請稍後重新整理此頁面；不會重複收費。`,
  },
  invoicePayment: {
    title: '繳付帳單',
    intro: (method) =>
      method === 'atm'
        ? '您的訂閱帳單以 ATM 轉帳繳付，請至綠界頁面取得虛擬帳號。'
        : '您的訂閱帳單以超商代碼繳付，請至綠界頁面取得繳費代碼。',
    getAtm: '前往綠界取得 ATM 虛擬帳號',
    getCvs: '前往綠界取得超商繳費代碼',
    renewal: '訂閱續約',
    waitingNote: '款項入帳後帳單即完成繳費，不會另外收費。',
    paidTitle: '已付款',
    paid: '綠界已收到您的付款，謝謝。',
    expiredTitle: '此筆繳費已逾期',
    expired: '繳費期限已過，商家會再寄給您新的繳費資訊。',
    waitingTitle: '等待綠界回覆',
    waiting: '您已前往綠界取得繳費資訊，綠界送出後會顯示在此頁。若您在綠界顯示前就離開了，請聯絡商家。',
  },
  declines: {
    card_declined: '您的卡片遭到拒絕。',
    insufficient_funds: '您的卡片額度不足。',
    expired_card: '您的卡片已過期。',
    incorrect_number: '信用卡號不正確。',
    invalid_expiry: '卡片有效期限已過。',
    incorrect_cvc: '安全碼不正確。',
    authentication_failed: '卡片驗證（3-D Secure）失敗。',
    processor_not_configured: '這家商店尚未開放付款，未收取任何費用。請聯絡商家。',
    processor_unavailable: '這家商店目前無法付款，未收取任何費用。請聯絡商家。',
  },
  titles: {
    notFound: '找不到結帳頁面',
    expired: '結帳已逾時',
    alreadyPaid: '已完成付款',
    refunded: '款項已退回',
    inProgress: '付款處理中',
    thanks: '感謝您的購買',
    canceled: '已取消結帳',
    linkNotFound: '找不到付款連結',
    linkUnavailable: '付款連結無法使用',
    paymentsUnavailable: '目前無法付款',
  },
  texts: {
    notFound: '此結帳連結無效。',
    expired: '此結帳已逾時，請重新開始。',
    alreadyPaid: '此筆結帳已付款，不會再收取任何費用。',
    refunded: '此筆款項已全額退回。',
    refundedDuplicate: '此電子郵件已訂閱這項商品，因此這筆款項已全額退回。',
    inProgress: '此筆結帳正在另一個視窗中付款。',
    thanks: '我們已收到您的付款。',
    canceled: '您已離開結帳，未收取任何費用。',
    linkNotFound: '此付款連結無效。',
    linkInactive: '此付款連結已停用。',
    linkSoldOut: '此付款連結的購買數量已達上限。',
    linkProductGone: '此付款連結的商品已無法購買。',
    linkDown: '此付款連結目前無法開啟結帳，請稍後再試。',
  },
  einvoice: {
    title: '電子發票',
    choices: {
      MEMBER: '會員載具',
      MOBILE_BARCODE: '手機條碼載具',
      CITIZEN_CERTIFICATE: '自然人憑證條碼',
      DONATION: '捐贈發票',
      B2B: '公司發票（統一編號）',
    },
    memberHint: '以您的電子郵件歸戶，開立後寄送通知。',
    fields: {
      barcode: '手機條碼',
      certificate: '憑證條碼',
      donation_code: '愛心碼',
      tax_id: '統一編號',
      company_name: '公司抬頭（選填）',
    },
    rules: {
      type: '請選擇發票的開立方式。',
      barcode: '手機條碼為「/」加 7 個字元（數字、大寫英文字母或 . + -），例如 /ABC1234。',
      certificate: '自然人憑證條碼為 2 個大寫英文字母加 14 位數字。',
      donation_code: '愛心碼為 3 到 7 位數字。',
      tax_id: '統一編號為 8 位數字且須通過檢查碼驗證，請再確認一次。',
      company_name: '公司抬頭最多 255 個字。',
    },
    invalid: '請檢查電子發票資料，未收取任何費用。',
    number: '發票號碼',
    randomCode: '隨機碼',
    voided: '（已作廢）',
    issuedTo: (choice) => {
      switch (choice.type) {
        case 'MEMBER':
          return '將開立至會員載具';
        case 'MOBILE_BARCODE':
          return `將開立至手機條碼 ${choice.carrier}`;
        case 'CITIZEN_CERTIFICATE':
          return `將開立至自然人憑證條碼 ${choice.carrier}`;
        case 'DONATION':
          return `將捐贈至愛心碼 ${choice.donation_code}`;
        case 'B2B':
          return `將開立至統一編號 ${choice.tax_id}`;
      }
    },
  },
  product: '商品',
  amountPaid: '付款金額',
  date: '日期',
  backTo: (merchant) => `返回 ${merchant}`,
  backToShop: '返回商店',
  startAgain: '重新開始',
};

const MESSAGES: Record<Locale, Messages> = { en, 'zh-TW': zhTW };

export const messagesFor = (locale: Locale): Messages => MESSAGES[locale];

/**
 * The page's language: the session's (or link's) `locale`, else the browser's first supported
 * `Accept-Language` (`languageOf`: any `zh` reads Traditional Chinese, any `en` English),
 * else English (what a client that names no language, such as a script, gets).
 */
export function chooseLocale(explicit: string | null | undefined, acceptLanguage: string | undefined): Locale {
  if (explicit === 'zh-TW' || explicit === 'en') return explicit;
  return languageOf(acceptLanguage) ?? 'en';
}

/** A refusal in the buyer's language: the decline codes the processor gives, else its message. */
export function refusalText(error: ApiError, t: Messages): string {
  const code = (error.details?.[0] as { code?: unknown } | undefined)?.code;
  return (typeof code === 'string' && t.declines[code]) || error.message;
}

/** Why a code was not applied, in the page's language; null for a failure that is not about the code. */
export function promotionRefusal(error: ApiError, t: Messages): string | null {
  const code = (error.details?.[0] as { code?: unknown } | undefined)?.code;
  if (error.status === 422) {
    if (code === 'PROMO_CODE_ALREADY_USED') return t.promotion.alreadyUsed;
    return code === 'changes_trial' ? t.promotion.changesTrial : t.promotion.invalid;
  }
  if (error.status === 409) return t.promotion.changedMeanwhile;
  if (error.status === 503) return t.promotion.unavailable;
  return null;
}

/** What a plan's allowance grants each paid period, in words; undefined for a plan without one. */
export function planAllowance(
  t: Messages,
  credits: { amount: number; expires_after_days: number | null; rollover?: boolean } | null | undefined,
): string | undefined {
  if (!credits) return undefined;
  return t.planCredits(credits.amount.toLocaleString('en-US'), credits.rollover ?? false, credits.expires_after_days);
}

/** A plan's metered prices in words; undefined for a plan without. */
export function planUsagePrices(
  t: Messages,
  prices: Array<{ meter: string; unit_amount: number; package_size: number }> | null | undefined,
): string | undefined {
  if (!prices?.length) return undefined;
  return t.meteredPrices(
    prices.map((p) => ({ meter: p.meter, price: formatTwd(p.unit_amount), packageSize: p.package_size })),
  );
}

/** What will be charged and when, in words: "NT$240 today, then NT$299 per month". */
export function priceSchedule(
  t: Messages,
  price: {
    today: number;
    /** The plan's price per period after today; absent for one-time products. */
    recurring?: { amount: number; interval: Interval; count: number };
    trialDays?: number;
    /** What a CREDITS product grants. */
    credits?: { amount: number; expires_after_days: number | null } | null;
  },
): string {
  if (price.credits) {
    const { amount, expires_after_days } = price.credits;
    return t.oneTimeCredits(formatTwd(price.today), amount.toLocaleString('en-US'), expires_after_days);
  }
  if (!price.recurring) return t.oneTime(formatTwd(price.today));
  const period = t.period(price.recurring.interval, price.recurring.count);
  const then = formatTwd(price.recurring.amount);
  if (price.trialDays) return t.freeThen(price.trialDays, then, period);
  if (price.today === price.recurring.amount) return t.recurring(then, period);
  return t.todayThen(formatTwd(price.today), then, period);
}
