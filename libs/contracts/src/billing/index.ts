export * from './billing';
export * from './customer-identity';
export * from './test-clocks';
export * from './portal';
export * from './billing-settings';
export * from './switching';
export * from './subscription-creation';
export * from './metrics';
