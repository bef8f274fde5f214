export * from './command-handler';
export * from './database';
export * from './event-store';
export * from './schema';
export * from './subscriber';
export * from './types';
export * from './cursor-page';
export * from './acting';
