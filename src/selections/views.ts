import type { Actor } from '../contract/index.js'
import type { SelectionContext } from './context.js'
import { EXCLUSION_ATTRIBUTION } from './exclusions.js'
import { type ExportEnd, manifestFile, manifestStream } from './export.js'
import { MEMBER_ORDERING } from './id-order.js'
import { load, members } from './load.js'
import { lookalikesOf } from './stored-lookalikes.js'
import { checkLimit, memberView, nextCursor } from './paging.js'
import { recoveryLink } from './recovery.js'
import { assertMembersKept } from './pruned-members.js'
import { upstreamMovedOf } from './usability.js'
import type { ExportFormat, MemberPage, SelectionView } from './schemas.js'
import type { SelectionMember, SelectionRecord, SelectionService } from './selection-service.js'

function toView(ctx: SelectionContext, selection: SelectionRecord, first: readonly SelectionMember[], lookalikes: SelectionView['lookalike_ids']): SelectionView {
  const id = selection.selection_id
  const c = selection.completeness
  const expired = selection.state === 'expired'
  const origin = selection.origin
  const moved = upstreamMovedOf(ctx, selection)
  return {
    selection_id: id,
    resource: selection.resource,
    environment: selection.environment,
    state: expired ? 'expired' : 'frozen',
    selector: { filter: selection.selector.filter, exclude: [...selection.selector.exclude] },
    fields: [...selection.fields],
    withheld_fields: [...selection.withheld_fields],
    created_by: selection.created_by,
    created_at: selection.created_at,
    expires_at: selection.expires_at,
    count: selection.count,
    digest: selection.digest,
    consistent_snapshot: selection.consistent_snapshot,
    status: c.status,
    complete: selection.complete,
    truncated: c.truncated,
    incomplete_reasons: [...c.incomplete_reasons],
    continuation: c.continuation,
    warnings: [...c.warnings],
    scope: c.scope,
    committable: selection.complete && !expired && moved === null,
    upstream_moved: moved,
    recovery_of: origin?.kind === 'recovery' ? origin.selection_id : null,
    compensation_of: origin?.kind === 'compensation' ? origin.operation_id : null,
    remainder_of: origin?.kind === 'remainder' ? origin.operation_id : null,
    recovery: recoveryLink(selection),
    exclusions: selection.exclusions.map((e) => ({ rule: e.rule, filter: e.filter, count: e.count, records_url: `/v1/selections/${id}/excluded?rule=${encodeURIComponent(e.rule)}` })),
    exclusion_rule: EXCLUSION_ATTRIBUTION,
    // counts over an incomplete walk are of the records it returned only: no group of them is complete
    groups: selection.groups.map((g) => ({ ...g, values: [...g.values], complete: g.complete && selection.complete })),
    lookalike_ids: lookalikes,
    records: first.map((m) => memberView(m, selection.fields)),
    next_cursor: nextCursor(ctx, id, 'members', first, ctx.firstPageSize, selection.count),
    records_url: `/v1/selections/${id}/records`,
    export_urls: { csv: `/v1/selections/${id}/export?format=csv`, ndjson: `/v1/selections/${id}/export?format=ndjson` },
  }
}

export async function view(ctx: SelectionContext, actor: Actor, selectionId: string): Promise<SelectionView> {
  const selection = await load(ctx, actor, selectionId)
  assertMembersKept(selection)
  // over every member, found by the freeze and stored with the selection: each surface renders this one answer
  const { groups, more_groups } = await lookalikesOf(ctx, selection)
  return toView(ctx, selection, await members(ctx, selectionId, 0, ctx.firstPageSize), { groups, more_groups })
}

export async function memberPage(ctx: SelectionContext, actor: Actor, selectionId: string, query: Parameters<SelectionService['page']>[2]): Promise<MemberPage> {
  const selection = await load(ctx, actor, selectionId)
  assertMembersKept(selection)
  const limit = checkLimit(query.limit)
  const after = ctx.cursors.decode(selectionId, 'members', query.cursor, selection.count)
  const page = await members(ctx, selectionId, after, limit)
  return {
    selection_id: selectionId,
    count: selection.count,
    digest: selection.digest,
    complete: selection.complete,
    incomplete_reasons: [...selection.completeness.incomplete_reasons],
    records: page.map((m) => memberView(m, selection.fields)),
    next_cursor: nextCursor(ctx, selectionId, 'members', page, limit, selection.count),
    page: { returned: page.length, limit, ordering: MEMBER_ORDERING },
  }
}

export async function exportStream(ctx: SelectionContext, actor: Actor, selectionId: string, format: ExportFormat, onEnd?: (end: ExportEnd) => Promise<void>): ReturnType<SelectionService['exportStream']> {
  const selection = await load(ctx, actor, selectionId)
  // refused before the stream starts: a cut stream would not say why, an empty one would look whole
  assertMembersKept(selection)
  return {
    // Members are fetched page by page as the stream is read, so memory stays flat however large the selection.
    stream: manifestStream(format, selection, (after, limit) => members(ctx, selectionId, after, limit), { upstreamMoved: upstreamMovedOf(ctx, selection), onEnd, stallMs: ctx.exportStallMs }),
    ...manifestFile(selectionId, format),
    selection,
  }
}
