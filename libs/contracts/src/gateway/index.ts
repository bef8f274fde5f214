export * from './organizations';
export * from './record-history';
export * from './admin-api';
export * from './oauth-apps';
