export * from './events';
export * from './sessions';
export * from './embedded-checkouts';
export * from './payment-links';
export * from './charges';
export * from './refunds';
export * from './payment-processor';
export * from './orders';
