export * from './decider-spec';
export * from './servers';
