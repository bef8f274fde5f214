export * from './middleware';
export * from './store';
