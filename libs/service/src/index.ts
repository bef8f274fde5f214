export { createApp, DEFAULT_BODY_LIMIT, type CreateAppOptions, type ServiceApp } from './app';
export { isSaneRequestId, requestContext, requestTracker, REQUEST_ID_HEADER } from './context';
export type { Lane, LaneHandler, LaneRequest, LaneResponse } from './lane';
export { type RouteLaneSpec, writeJson } from './route-lane';
export { RoutePath, pathOfTarget, pathSegmentsOf } from './route-path';
export { errorHandler, notFoundHandler, toApiError } from './errors';
export { createLogger, type CreateLoggerOptions, type Logger } from './logger';
export { logFormat, prettyLogLine, type LogFormat } from './pretty-log';
export { DEFAULT_READINESS_TIMEOUT_MS, Readiness, type ReadinessCheck, type ReadinessResult } from './readiness';
export {
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  SERVICE_KEEP_ALIVE_TIMEOUT_MS,
  startService,
  type Closer,
  type ServiceHandle,
  type ShutdownReport,
  type StartServiceOptions,
} from './server';
export { exitOnSignals, type ExitOnSignalsOptions } from './signals';
export {
  validate,
  type RequestSchemas,
  type ValidatedHandler,
  type ValidatedInput,
  type ValidatedLocals,
} from './validate';
export {
  actorOf,
  adminOrganizationOf,
  callerOf,
  checkSignedBody,
  requireAdminOrganization,
  requireCaller,
  requireInternalSignature,
  scopesForPath,
  secretCallerOf,
  type InternalAuthOptions,
  type Tenant,
} from './identity';
export { ROUTE_PATTERN, ServiceMetrics } from './metrics';
export {
  INVALID_CHARACTERS,
  MAX_JSON_DEPTH,
  TOO_DEEP,
  findTextProblems,
  isLineKey,
  refuseInvalidText,
  textProblem,
  type TextKind,
} from './text-guard';
export {
  bodyHeadersRefusal,
  byteOrderMarkRefusal,
  formBodies,
  jsonBodies,
  refuseUnreadableBodies,
  startsWithByteOrderMark,
} from './json-body';
export { PROTOCOL_ERRORS, answerProtocolErrorsInEnvelope, rawErrorResponse } from './protocol-errors';
export { escapeHtml, formatTwd, languageOf } from './html';
export { Html, html, raw } from './template';
export { DEFAULT_TIME_ZONE, type DateOptions, type PageLanguage, formatDate, formatDateTime } from './dates';
export { einvoiceCarrierText } from './einvoice-text';
export {
  EINVOICE_FORM_FIELDS,
  type EinvoiceField,
  type EinvoiceForm,
  einvoiceFormChoice,
  einvoiceFormOf,
  offeredEinvoiceChoices,
  readEinvoiceForm,
} from './einvoice-form';
export {
  CredentialsUnreadable,
  EINVOICE_CREDENTIALS,
  PROCESSOR_CREDENTIALS,
  credentialsKeyOf,
  openCredentials,
  sealCredentials,
  type CredentialsKey,
  type CredentialsPurpose,
} from './sealed-credentials';
