export * from './database-bus';
export * from './delivery';
export * from './exactly-once';
export * from './in-process';
export * from './kafka';
export * from './partition';
export * from './relay';
export * from './types';
