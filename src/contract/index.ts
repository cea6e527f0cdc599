export {
  REASON_CODES,
  REASON_TEXT,
  TRUNCATING_REASONS,
  WARNING_CODES,
  CONTINUATION_KINDS,
  USES,
  DECISIONS,
  FIELD_OMISSION_REASONS,
  STABILITY_KINDS,
  type Stability,
  type ReasonCode,
  type WarningCode,
  type ContinuationKind,
  type Use,
  type Decision,
  type FieldOmissionReason,
} from './codes.js'
export { canonicalJson, digestOf, sha256, createListDigest, hasLoneSurrogate, wellFormed } from './canonical.js'
export { surelySameData, surelySameJson } from './same-json.js'
export { sameValue, sameFieldValue, sameVersion } from './same-record.js'
export { protoKeyPaths } from './proto-keys.js'
export { SEARCH_MAX_DEADLINE_MS, SELECTION_MAX_DEADLINE_MS, retryDeadline } from './deadlines.js'
export { quotedKey, unstorableKey } from './key-text.js'
export { decodeUtf8Marking, escapeMarkedBytes, holdsMarkedByte } from './utf8-bytes.js'
export {
  reasonCodeSchema,
  warningCodeSchema,
  continuationKindSchema,
  incompleteReasonSchema,
  warningSchema,
  continuationSchema,
  scopeSchema,
  pageSchema,
  envelopeOf,
  envelopeSchema,
  envelopeJsonSchema,
  type IncompleteReason,
  type Warning,
  type Continuation,
  type Scope,
  type Page,
  type Envelope,
} from './envelope.js'
export { decide, heldStill, type Verdict } from './decide.js'
export { fileIdentityOf, movedFrom, openPinned, type PinnedHandle } from './file-identity.js'
export { busyWaitingDriver, whileBusy, type BusyRefusal, type BusyWaitOptions } from './sqlite-busy-wait.js'
export { preparedOnce, MAX_PREPARED } from './prepared-once.js'
export { WarrantError, isWarrantError, exitCodeOf, ERROR_STATUS, type ErrorCode, type ErrorBody } from './errors.js'
export {
  filterSchema,
  FILTER_GRAMMAR,
  MAX_FILTER_VALUE_CHARS,
  FILTER_DESCRIPTION,
  fieldConditionSchema,
  RESERVED_KEYS,
  isReservedKey,
  filterFields,
  clausesOf,
  matchesFilter,
  filterMatcher,
  sameAsDeclared,
  clauseTypeProblem,
  type Filter,
  type FieldTypeNames,
  type FieldCondition,
  type Clause,
  type Operator,
} from './filter.js'
export { decimalOf, compareDecimals, wholeDecimal } from './decimal.js'
export { instantOf, namesInstant, canonicalInstant } from './instant.js'
export { duplicateKeyOf, duplicateKeysOf, type DuplicateKey } from './duplicate-keys.js'
export { walkJsonText, type JsonTextVisitor } from './json-text.js'
export { cursorArgument, CURSOR_RULE } from './cursor-argument.js'
export { MAX_FIELD_NAMES, fieldList, fieldListText } from './field-list.js'
export { cursorKindOf, CURSOR_KIND_TEXT, type CursorKind } from './cursor-kind.js'
export { markMixedScript, mixedScriptCharacters, codePointName } from './mixed-script.js'
export { queryInteger } from './query-integer.js'
export { revealed, escapedUnspoofable, markIndistinct, readingSkeleton } from './revealed.js'
export { confusableSkeleton, differingParts, DRAWN_AS_LATIN, sharedEnds } from './confusable-skeleton.js'
export { maskPassword } from './masked-url.js'
export { isLoopbackHost } from './loopback-host.js'
export { MYSQL_SSL_MODE_PARAM, MYSQL_SSL_MODES, mysqlSslModeOf, type MysqlSslMode } from './mysql-ssl-mode.js'
export { roundedNumbersOf, holdsRounded, roundedLiteralOf, doubleHolds, type RoundedLiteral } from './rounded-numbers.js'
export { ROLES, SURFACES, inScope, scopesSchema, SYSTEM_ACTOR, type Role, type Surface, type Scopes, type Actor } from './actor.js'
export type { RunEvent } from './run-event.js'
export { checkIdempotencyKey, scopedIdempotencyKey, idempotencyKeySchema, IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency-key.js'
