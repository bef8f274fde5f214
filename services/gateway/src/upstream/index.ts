export {
  createUpstream,
  DEFAULT_BREAKER_OPTIONS,
  blameUpstreamFailure,
  defaultIsFailureStatus,
  UpstreamError,
  UPSTREAM_FREE_SOCKET_TIMEOUT_MS,
  type ForwardedRequest,
  type ForwardedResponse,
  type LateAnswer,
  type UpstreamBreakerOptions,
  type UpstreamHandler,
  type UpstreamOptions,
} from './upstream';
