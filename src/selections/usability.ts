import { WarrantError } from '../contract/index.js'
import type { SelectionContext } from './context.js'
import type { SelectionRecord } from './selection-service.js'

/** ISO timestamps compare correctly as strings, so expiry needs no date parsing. */
export function isExpired(ctx: SelectionContext, selection: SelectionRecord, now = ctx.nowIso()): boolean {
  return selection.expires_at <= now
}

/** Plans, approvals and commits act on a selection only while it is fresh and its inventory was complete. */
export function assertUsable(ctx: SelectionContext, selection: SelectionRecord, now = ctx.nowIso()): void {
  if (selection.expires_at <= now)
    throw new WarrantError('expired', `selection ${selection.selection_id} expired at ${selection.expires_at}; create a new selection and review it again`, {
      selection_id: selection.selection_id,
      expires_at: selection.expires_at,
    })
  if (!selection.complete)
    throw new WarrantError(
      'selection_incomplete',
      `selection ${selection.selection_id} was built from an incomplete inventory (${selection.completeness.incomplete_reasons.map((r) => r.code).join(', ')}); it can be reviewed, never changed. Recover it with POST /v1/selections/${selection.selection_id}/recover`,
      { selection_id: selection.selection_id, incomplete_reasons: selection.completeness.incomplete_reasons, recovery_path: `/v1/selections/${selection.selection_id}/recover` },
    )
}
