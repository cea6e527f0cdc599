/**
 * Warrant as a library: the completeness contract and the inventory walk, usable in any agent tool without
 * the server.
 *
 * @example
 * import { searchAll, decide, envelopeSchema } from 'warrant'
 * const envelope = await searchAll(connector, { resource: 'accounts', filter: {} }, { maxPages: 10 }, options)
 * if (decide(envelope, 'change_from_absence').decision !== 'proceed') askAHuman(envelope.incomplete_reasons)
 */
export * from './contract/index.js'
export { searchAll, createCursorCodec, type CursorCodec, type SearchQuery, type Budget, type SearchOptions } from './inventory/index.js'
export type {
  Connector,
  ReadSession,
  ReadPageRequest,
  ReadPageResult,
  ReadByIdsResult,
  SourceRecord,
  WriteRequest,
  WriteOutcome,
  UpstreamCall,
  UpstreamCallListener,
} from './connectors/connector.js'
/** For webhook receivers: check a Warrant notification's `X-Warrant-Signature` (HMAC-SHA256 over `<timestamp>.<body>`). */
export { verifySignature, signatureOf, SIGNATURE_HEADER, TIMESTAMP_HEADER, EVENT_HEADER, DELIVERY_HEADER } from './notifications/signature.js'
