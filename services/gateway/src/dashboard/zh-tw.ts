/**
 * The dashboard in Traditional Chinese (Taiwan), keyed by its English text (`i18n.ts`). Each
 * `{name}` is filled after translation. Money stays `NT$` and times carry their zone, as in English.
 */
export const ZH_TW: Record<string, string> = {
  // The frame of every page
  'Billing dashboard': '訂閱帳務後台',
  'Skip to content': '跳到主要內容',
  Language: '語言',
  Environment: '環境',
  Sandbox: '測試環境',
  Production: '正式環境',
  'Sandbox: test data only, no real money moves.': '測試環境：僅有測試資料，不會有真實金流。',
  Sections: '功能',
  Operator: '平台管理員',
  'All organizations': '所有組織',
  owner: '擁有者',
  member: '成員',
  operator: '平台管理員',
  'Sign out': '登出',
  Pages: '分頁',
  'First page': '第一頁',
  'Previous page': '上一頁',
  'Next page': '下一頁',
  'Nothing yet.': '尚無資料。',

  // Sections
  Overview: '總覽',
  Products: '商品',
  'Coupons and codes': '折價券與優惠碼',
  'Payment links': '付款連結',
  Customers: '顧客',
  Subscriptions: '訂閱',
  'E-invoices': '電子發票',
  Webhooks: 'Webhooks',
  Emails: '電子郵件',
  'API keys': 'API 金鑰',
  Settings: '設定',
  'Test clocks': '測試時鐘',
  Team: '團隊',

  // Signing in, refusals
  'Sign in': '登入',
  'Merchant user': '商家使用者',
  Email: '電子郵件',
  Password: '密碼',
  'Admin token': '管理員權杖',
  'Sign in as operator': '以平台管理員登入',
  'Too many failed attempts: signing in is locked until {until}.': '失敗次數過多：登入已鎖定至 {until}。',
  'Wrong email or password (or admin token).': '電子郵件或密碼（或管理員權杖）錯誤。',
  'Signed out': '已登出',
  'Your session ended.': '您的登入已結束。',
  'Sign in again': '重新登入',
  Refused: '已拒絕',
  'This form has expired or did not come from the dashboard. Go back, reload the page and try again.':
    '此表單已過期，或並非來自後台。請返回、重新整理頁面後再試一次。',
  'Not found': '找不到頁面',
  'There is no such page, or it is not yours to see.': '沒有這個頁面，或您沒有權限查看。',
  'Back to the dashboard': '回到後台',
  Organizations: '組織',
  'No organizations yet.': '尚無任何組織。',
  'Unknown action.': '未知的操作。',
  'Only an owner of the organization may do this.': '只有組織的擁有者可以執行此操作。',
};
