import { newEventId } from './event-id';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newEventId', () => {
  it('is a version 7 UUID with the RFC 9562 variant', () => {
    for (let i = 0; i < 1000; i++) expect(newEventId()).toMatch(UUID_V7);
  });

  it('carries the millisecond clock in its first 48 bits', () => {
    const at = Date.UTC(2026, 10, 23, 12, 34, 56, 789);
    const id = newEventId(at);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it('sorts by time across milliseconds, as text and as PostgreSQL compares uuids', () => {
    const earlier = Array.from({ length: 50 }, () => newEventId(1_700_000_000_000));
    const later = Array.from({ length: 50 }, () => newEventId(1_700_000_000_001));
    for (const a of earlier) for (const b of later) expect(a < b).toBe(true);
  });

  it('is unique', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newEventId(1_700_000_000_000)));
    expect(ids.size).toBe(10_000);
  });
});
