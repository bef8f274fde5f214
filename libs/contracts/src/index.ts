// The contract of every service, one folder each, and what they share: schemas (zod) of the
// public API, the internal endpoints and the events, from which OpenAPI and AsyncAPI are made.
// Folders are named with their index: a stale dist file of the old flat layout (dist/checkout.js)
// would otherwise be resolved before the folder.
export * from './shared/index';
export * from './catalog/products';
export * from './promotions/promotions';
export * from './checkout/index';
export * from './billing/index';
export * from './notifications/webhooks';
export * from './gateway/index';
export * from './events/index';
export * from './notifications/emails';
