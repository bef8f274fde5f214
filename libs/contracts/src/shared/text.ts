import { z } from 'zod';

/**
 * Upper bounds of free text in requests (docs/errors.md, "Text at the edge"). Every string a
 * request may carry has a maximum; ids, slugs and cursors share `MAX_ID_LENGTH`, since no id
 * the platform makes is longer and a longer one can only name nothing.
 */
export const TEXT_LIMITS = {
  id: 255,
  name: 255,
  email: 320,
  url: 2048,
  description: 5000,
  /** Enum-like query values (`type=subscription`), before they are checked against the enum. */
  token: 64,
} as const;

export const MAX_ID_LENGTH = TEXT_LIMITS.id;

/** An id, slug or cursor given by a client: any string up to `MAX_ID_LENGTH`; one that names nothing is a 404. */
export const idText = () => z.string().max(MAX_ID_LENGTH);
