import { WarrantError, digestOf } from '../contract/index.js'
import type { CursorCodec } from '../inventory/index.js'

/**
 * Cursors over a frozen list (members, or one rule's excluded records): the last `ord` returned, signed with
 * the gateway's cursor key and bound to one selection and one list. The list never changes, so a cursor does
 * not go stale while its selection exists; a forged, altered or foreign one is `invalid_cursor`.
 */
export interface PageCursors {
  encode(selectionId: string, list: string, afterOrd: number): string
  /** The ord to continue after; 0 without a cursor. */
  decode(selectionId: string, list: string, cursor: string | undefined | null, maxOrd: number): number
}

export function createPageCursors(codec: CursorCodec): PageCursors {
  const fingerprint = (selectionId: string, list: string) => digestOf({ v: 1, kind: 'selection_page', selection_id: selectionId, list })
  return {
    encode(selectionId, list, afterOrd) {
      return codec.encode({
        fingerprint: fingerprint(selectionId, list),
        snapshot: null,
        consistent: true,
        sources: [{ source: 'ord', position: String(afterOrd), finished: false, gaps: [] }],
      })
    },
    decode(selectionId, list, cursor, maxOrd) {
      if (cursor === undefined || cursor === null || cursor === '') return 0
      // An old cursor decodes with `expired: true`; over an immutable list it still means the same position.
      const decoded = codec.decode(cursor, fingerprint(selectionId, list))
      const position = decoded.sources.length === 1 && decoded.sources[0]!.source === 'ord' ? decoded.sources[0]!.position : null
      const ord = position !== null && /^\d{1,15}$/.test(position) ? Number(position) : NaN
      if (!Number.isSafeInteger(ord) || ord < 0 || ord > maxOrd)
        throw new WarrantError('invalid_cursor', 'the cursor does not name a position in this list', { reason: 'malformed' })
      return ord
    },
  }
}
