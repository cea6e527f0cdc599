export {
  searchAll,
  queryFingerprint,
  DEFAULT_BUDGET,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  type SearchQuery,
  type Budget,
  type SearchScope,
  type SearchOptions,
  type WalkedRecord,
} from './search-all.js'
export {
  createCursorCodec,
  DEFAULT_CURSOR_MAX_AGE_MS,
  type CursorCodec,
  type CursorCodecOptions,
  type DecodedCursor,
  type WalkCursorState,
  type SourceProgress,
  type SourceGap,
  type InvalidCursorReason,
} from './cursor-codec.js'
