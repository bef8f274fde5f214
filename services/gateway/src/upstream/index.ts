export {
  createUpstream,
  DEFAULT_BREAKER_OPTIONS,
  blameUpstreamFailure,
  defaultIsFailureStatus,
  UpstreamError,
  type LateAnswer,
  type UpstreamBreakerOptions,
  type UpstreamHandler,
  type UpstreamOptions,
} from './upstream';
