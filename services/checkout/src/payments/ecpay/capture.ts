/**
 * ECPay captures card authorisations once a day, at 20:15 Taiwan time (每日自動關帳, its refund
 * document 信用卡請退款 ?p=9242 and ?p=16567): an authorisation is 已授權 until then, 要關帳 while
 * the capture is under way, then 已關帳.
 */
const DAY_MS = 24 * 3600_000;

/** The first 20:15 in Taiwan (12:15 UTC) after `instant`: when ECPay captures an authorisation made then. */
export function nextDailyCapture(instant: Date): Date {
  const taipeiDay = new Date(instant.getTime() + 8 * 3600_000).toISOString().slice(0, 10);
  const capture = new Date(`${taipeiDay}T20:15:00+08:00`);
  return capture.getTime() > instant.getTime() ? capture : new Date(capture.getTime() + DAY_MS);
}
