import type { PageLanguage } from '@billing/service';

/** What each email says, in the two languages buyers read: zh-TW (the default) and en. */
export interface EmailMessages {
  receiptSubject: (merchant: string) => string;
  receiptHeading: string;
  receiptIntro: (merchant: string) => string;
  amountPaid: string;
  item: string;
  period: string;
  invoiceNumber: string;
  einvoiceNumber: string;
  paidOn: string;
  paymentFailedSubject: (merchant: string) => string;
  paymentFailedHeading: string;
  paymentFailedIntro: (merchant: string, amount: string) => string;
  nextAttempt: string;
  updateCard: string;
  updateCardExpires: (date: string) => string;
  trialEndingSubject: (merchant: string) => string;
  trialEndingHeading: string;
  trialEndingIntro: (plan: string, date: string, amount: string) => string;
  renewalSubject: (merchant: string) => string;
  renewalHeading: string;
  renewalIntro: (plan: string, date: string, amount: string) => string;
  canceledSubject: (merchant: string) => string;
  canceledHeading: string;
  canceledIntro: (plan: string) => string;
  refundSubject: (merchant: string) => string;
  refundHeading: string;
  refundIntro: (amount: string) => string;
  refundReason: string;
  instructionsSubject: (merchant: string) => string;
  reminderSubject: (merchant: string, deadline: string) => string;
  instructionsHeading: string;
  reminderHeading: string;
  instructionsIntro: (amount: string, deadline: string) => string;
  atmHowTo: string;
  cvsHowTo: string;
  /** The processor gives the account or code on its own page (ECPay): the email links to it. */
  getCodeHowTo: string;
  getAtmAccount: string;
  getCvsCode: string;
  amountToPay: string;
  bankCode: string;
  account: string;
  paymentCode: string;
  deadline: string;
  footer: (merchant: string) => string;
}

const zhTW: EmailMessages = {
  receiptSubject: (merchant) => `${merchant} 付款收據`,
  receiptHeading: '付款成功',
  receiptIntro: (merchant) => `感謝您的付款，以下是您在 ${merchant} 的收據。`,
  amountPaid: '付款金額',
  item: '項目',
  period: '期間',
  invoiceNumber: '帳單編號',
  einvoiceNumber: '電子發票號碼',
  paidOn: '付款時間',
  paymentFailedSubject: (merchant) => `${merchant} 扣款失敗，請更新付款方式`,
  paymentFailedHeading: '扣款失敗',
  paymentFailedIntro: (merchant, amount) =>
    `我們無法向您的卡片收取 ${merchant} 的 ${amount}。請更新付款方式，以免服務中斷。`,
  nextAttempt: '下次扣款時間',
  updateCard: '更新付款方式',
  updateCardExpires: (date) => `此連結於 ${date} 前有效。`,
  trialEndingSubject: (merchant) => `${merchant} 試用即將結束`,
  trialEndingHeading: '試用即將結束',
  trialEndingIntro: (plan, date, amount) => `您的「${plan}」試用將於 ${date} 結束，屆時將收取 ${amount}。`,
  renewalSubject: (merchant) => `${merchant} 年度訂閱即將續約`,
  renewalHeading: '年度訂閱即將續約',
  renewalIntro: (plan, date, amount) =>
    `您的「${plan}」將於 ${date} 自動續約，屆時將收取 ${amount}。若不想續約，請在此之前取消。`,
  canceledSubject: (merchant) => `${merchant} 訂閱已取消`,
  canceledHeading: '訂閱已取消',
  canceledIntro: (plan) => `您的「${plan}」訂閱已取消，之後不會再收取費用。`,
  refundSubject: (merchant) => `${merchant} 退款通知`,
  refundHeading: '已退款',
  refundIntro: (amount) => `我們已退款 ${amount} 至您的原付款方式，入帳時間依發卡銀行而定。`,
  refundReason: '原因',
  instructionsSubject: (merchant) => `${merchant} 付款資訊`,
  reminderSubject: (merchant, deadline) => `提醒：請於 ${deadline} 前完成 ${merchant} 的付款`,
  instructionsHeading: '請完成付款',
  reminderHeading: '付款期限將至',
  instructionsIntro: (amount, deadline) => `請於 ${deadline} 前支付 ${amount}，逾期將自動取消。`,
  atmHowTo: '請使用 ATM 或網路銀行轉帳至下列虛擬帳號，金額須完全相符。',
  getCodeHowTo: '請按下方按鈕前往綠界，綠界會在其頁面提供帳號或代碼。',
  getAtmAccount: '前往綠界取得 ATM 虛擬帳號',
  getCvsCode: '前往綠界取得超商繳費代碼',
  cvsHowTo: '請至 7-ELEVEN、全家、萊爾富或 OK 超商的多媒體機台輸入繳費代碼，列印繳費單後至櫃檯付款。',
  amountToPay: '應付金額',
  bankCode: '銀行代碼',
  account: '虛擬帳號',
  paymentCode: '繳費代碼',
  deadline: '繳費期限',
  footer: (merchant) => `此信由 ${merchant} 寄出，請勿直接回覆。`,
};

const en: EmailMessages = {
  receiptSubject: (merchant) => `Your receipt from ${merchant}`,
  receiptHeading: 'Payment received',
  receiptIntro: (merchant) => `Thank you for your payment. Here is your receipt from ${merchant}.`,
  amountPaid: 'Amount paid',
  item: 'Item',
  period: 'Period',
  invoiceNumber: 'Invoice number',
  einvoiceNumber: 'E-invoice number',
  paidOn: 'Paid on',
  paymentFailedSubject: (merchant) => `Your payment to ${merchant} failed: please update your card`,
  paymentFailedHeading: 'Payment failed',
  paymentFailedIntro: (merchant, amount) =>
    `We could not charge ${amount} for ${merchant} to your card. Please update your payment method to keep your subscription.`,
  nextAttempt: 'Next attempt',
  updateCard: 'Update payment method',
  updateCardExpires: (date) => `This link works until ${date}.`,
  trialEndingSubject: (merchant) => `Your ${merchant} trial ends soon`,
  trialEndingHeading: 'Your trial ends soon',
  trialEndingIntro: (plan, date, amount) =>
    `Your trial of ${plan} ends on ${date}; you will then be charged ${amount}.`,
  renewalSubject: (merchant) => `Your ${merchant} subscription renews soon`,
  renewalHeading: 'Your yearly subscription renews soon',
  renewalIntro: (plan, date, amount) =>
    `Your subscription to ${plan} renews on ${date}, and ${amount} will be charged then. To stop it, cancel before that day.`,
  canceledSubject: (merchant) => `Your ${merchant} subscription is canceled`,
  canceledHeading: 'Subscription canceled',
  canceledIntro: (plan) => `Your subscription to ${plan} is canceled. You will not be charged again.`,
  refundSubject: (merchant) => `Your refund from ${merchant}`,
  refundHeading: 'Refund issued',
  refundIntro: (amount) =>
    `We refunded ${amount} to your original payment method. When it shows depends on your card's bank.`,
  refundReason: 'Reason',
  instructionsSubject: (merchant) => `How to pay ${merchant}`,
  reminderSubject: (merchant, deadline) => `Reminder: pay ${merchant} by ${deadline}`,
  instructionsHeading: 'Complete your payment',
  reminderHeading: 'Your payment is due soon',
  instructionsIntro: (amount, deadline) =>
    `Please pay ${amount} by ${deadline}; unpaid by then, the payment is canceled.`,
  atmHowTo: 'Transfer the exact amount to the virtual account below from an ATM or online banking.',
  getCodeHowTo: 'Press the button below to go to ECPay, which gives you the account or code on its page.',
  getAtmAccount: 'Get an ATM account at ECPay',
  getCvsCode: 'Get a store payment code at ECPay',
  cvsHowTo:
    'Enter the payment code at the kiosk of a 7-ELEVEN, FamilyMart, Hi-Life or OK Mart store, then pay the printed slip at the counter.',
  amountToPay: 'Amount to pay',
  bankCode: 'Bank code',
  account: 'Virtual account',
  paymentCode: 'Payment code',
  deadline: 'Pay by',
  footer: (merchant) => `Sent by ${merchant}. Please do not reply to this email.`,
};

export const EMAIL_MESSAGES: Record<PageLanguage, EmailMessages> = { 'zh-TW': zhTW, en };
