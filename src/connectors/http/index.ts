export { createHttpConnector, type HttpConnectorOptions } from './http-connector.js'
export { assertSafeBaseUrl, blockedHostReason, encodePathSegment, renderPathTemplate, assertRelativePath } from './url-guard.js'
export { REDACTED } from './redaction.js'
