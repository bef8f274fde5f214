export * from './envelope';
export * from './public-events';
export * from './event-catalog';
export * from './asyncapi';
export * from './schema-compatibility';
