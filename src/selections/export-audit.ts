import type { ExportFormat } from './schemas.js'
import type { SelectionRecord } from './selection-service.js'

/**
 * The action of the row an export writes when it starts, on every surface (the row's `surface` says which: `http`
 * for `GET /v1/selections/{id}/export`, `ui` for the review pages' link). Its end row (`GET /v1/selections/:id/export`
 * or `ui:export_manifest`, written when the stream ends) names it by `started_seq`, so an export that never ended (a
 * client still holding it, a process that died meanwhile) is a start row no end row names.
 */
export const EXPORT_STARTED_ACTION = 'selection.export_started'

/** What an export's start row says: which file of which frozen set began to be sent (`outcome: "started"`). */
export function exportStartedSummary(selection: SelectionRecord, format: ExportFormat) {
  return { outcome: 'started', format, count: selection.count, digest: selection.digest, complete: selection.complete, state: selection.state }
}
