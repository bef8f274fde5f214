import { ApiFailure } from './client';
import { translator } from './i18n';
import { FIELD_PROBLEM_WORDS, REFUSAL_WORDS, fieldProblem, refusalText } from './refusals';
import { ZH_TW } from './zh-tw';

const zh = { language: 'zh-TW' as const, t: translator('zh-TW') };
const en = { language: 'en' as const, t: translator('en') };
const invalid = new ApiFailure(422, 'validation_error', 'Request validation failed', [
  { path: 'price', code: 'too_small', message: 'Too small: expected number to be >=1' },
  { path: 'interval', code: 'invalid_value', message: 'Invalid option: expected one of "month"|"year"' },
  { path: 'retry_days', code: 'custom', message: 'retry_days must be strictly increasing' },
]);

describe('a refusal of the API on a dashboard page', () => {
  it("given English, says the API's own words, each field's after them", () => {
    expect(refusalText(invalid, en)).toBe(invalid.explanation);
    expect(fieldProblem(invalid.details[0]!, en)).toBe('Too small: expected number to be >=1');
  });

  it("given zh-TW, says the refusal and each field's problem by their codes, the API's words where no code says more", () => {
    expect(refusalText(invalid, zh)).toBe(
      '部分欄位的值無法儲存。（price：太小或太短；interval：不是可接受的值；retry_days：retry_days must be strictly increasing）',
    );
    expect(fieldProblem(invalid.details[1]!, zh)).toBe('不是可接受的值');
    const conflict = new ApiFailure(409, 'conflict', 'Version conflict on customer-cus_1');
    expect(refusalText(conflict, zh)).toBe('資料已在這段期間變更或已存在：請重新整理後再試。');
    const own = new ApiFailure(402, 'insufficient_credits', 'The balance is 620 credits; 9999 cannot be taken');
    expect(refusalText(own, zh)).toBe('The balance is 620 credits; 9999 cannot be taken');
  });

  it('has zh-TW words for every code it names', () => {
    const missing = [...Object.values(REFUSAL_WORDS), ...Object.values(FIELD_PROBLEM_WORDS)].filter((w) => !ZH_TW[w]);
    expect(missing).toEqual([]);
  });
});
