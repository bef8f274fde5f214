export * from './infrastructure';
export * from './run-service';
export * from './standalone';
export * from './testing';
export * from './internal-client';
export * from './periodic';
export * from './settings';
export * from './isolated-breaker';
