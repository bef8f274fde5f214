export * from './internal-signature';
