export * from './contract';
export * from './consumer';
export * from './mrr';
