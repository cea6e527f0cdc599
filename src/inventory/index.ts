export { searchAll } from './search-all.js'
export { walkInventory, type WalkOptions } from './walk-inventory.js'
export { memorySeenFilter, type SeenFilter } from './seen-filter.js'
export { queryFingerprint } from './query-fingerprint.js'
export {
  DEFAULT_BUDGET,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  MAX_CURSOR_CHARS,
  type SearchQuery,
  type Budget,
  type SearchScope,
  type SearchOptions,
  type WalkedRecord,
  type WalkSummary,
} from './search-types.js'
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
