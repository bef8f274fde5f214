import type { RequestHandler } from 'express';

/** Identity headers are the gateway's word alone: whatever a client sent under them is dropped. */
export const stripIdentityHeaders: RequestHandler = (req, _res, next) => {
  for (const name of Object.keys(req.headers)) if (name.startsWith('x-billing-')) delete req.headers[name];
  next();
};
