import { WarrantError } from '../contract/index.js'
import { UPSTREAM_PARTS, sameUpstream } from '../resources/index.js'
import type { SelectionContext } from './context.js'
import { assertMembersKept } from './pruned-members.js'
import type { SelectionRecord } from './selection-service.js'

/**
 * ISO timestamps compare correctly as strings, so expiry needs no date parsing. Without `now`, as the selection was
 * loaded: at the store's now (see load.ts `parseRow`), never this process's clock, which may disagree with the other
 * instances' on a shared store.
 */
export function isExpired(selection: SelectionRecord, now?: string): boolean {
  return now === undefined ? selection.state === 'expired' : selection.expires_at <= now
}

/** Plans, approvals and commits act on a selection only while it is fresh, its inventory complete, and its upstream where it was read. */
export function assertUsable(ctx: SelectionContext, selection: SelectionRecord, now?: string): void {
  // pruned only long after its expiry: the refusal says its records are gone too, not only that it is old
  assertMembersKept(selection)
  if (isExpired(selection, now))
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
  assertSameUpstream(ctx, selection)
}

/**
 * Why the selection's members no longer come from where its resource's connector points, or null. The environment a
 * selection keeps is a label the config declares; a connector re-pointed with the label left as it was (staging's
 * base_url set to production's) would have a plan proposed, approved and committed on members read elsewhere.
 * Selections frozen before the digest was kept have none: they are judged by their environment label alone, as then.
 */
export function upstreamMovedOf(ctx: SelectionContext, selection: SelectionRecord): string | null {
  // a resource no longer configured is refused where it is used (not_found), not here
  if (selection.upstream_digest === null || !ctx.catalogue.names.includes(selection.resource)) return null
  const resource = ctx.catalogue.get(selection.resource)
  if (sameUpstream(resource.config, selection.upstream_digest)) return null
  return `the connector of resource "${selection.resource}" points elsewhere than when selection ${selection.selection_id} was frozen (${UPSTREAM_PARTS}), though its environment still reads "${resource.environment}"; its members were read there, so nothing is proposed or changed on them here: create a new selection`
}

export function assertSameUpstream(ctx: SelectionContext, selection: SelectionRecord): void {
  const moved = upstreamMovedOf(ctx, selection)
  if (moved !== null)
    throw new WarrantError('conflict', moved, { reason: 'upstream_moved', resource: selection.resource, selection_id: selection.selection_id, config_drift: ['upstream_moved'] })
}
