export * from './errors';
export * from './events';
export * from './ids';
export * from './list';
export * from './openapi';
export * from './identity';
export * from './products';
