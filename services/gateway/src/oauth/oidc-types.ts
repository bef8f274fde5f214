// oidc-provider is an ES module and the gateway CommonJS: its types are imported as a module's.
export type {
  Adapter,
  AdapterPayload,
  ClientMetadata,
  Configuration,
  JWK,
  KoaContextWithOIDC,
  Provider,
} from 'oidc-provider' with { 'resolution-mode': 'import' };
