export {
  createUpstream,
  DEFAULT_BREAKER_OPTIONS,
  defaultIsFailureStatus,
  UpstreamError,
  type UpstreamBreakerOptions,
  type UpstreamHandler,
  type UpstreamOptions,
} from './upstream';
