import { creditsToTakeBack } from './refund';

describe('credits taken back for a refund of a CREDITS order', () => {
  it('takes them all back for a full refund, and never more', () => {
    expect(creditsToTakeBack(500, 300, 300)).toBe(500);
    expect(creditsToTakeBack(500, 400, 300)).toBe(500);
  });

  it('takes back the refunded share, rounded up', () => {
    // 100 of 300 TWD: 166.67 credits, 167 taken back, so the 333 kept are less than the 200 TWD kept paid for.
    expect(creditsToTakeBack(500, 100, 300)).toBe(167);
    expect(creditsToTakeBack(600, 100, 300)).toBe(200);
    expect(creditsToTakeBack(500, 1, 300)).toBe(2);
  });

  it('takes nothing back of an order that paid nothing, or for nothing refunded', () => {
    expect(creditsToTakeBack(500, 0, 0)).toBe(0);
    expect(creditsToTakeBack(500, 0, 300)).toBe(0);
  });

  it('stays exact where credits times TWD passes 2^53', () => {
    expect(creditsToTakeBack(1_000_000_000, 9_999_999, 10_000_000)).toBe(999_999_900);
  });
});
