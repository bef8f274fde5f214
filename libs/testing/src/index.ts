export * from './decider-spec';
export * from './servers';
export * from './service-calls';
export * from './fixtures';
export * from './kafka-broker';
