import type { z } from 'zod'
import { type Actor, type Filter, SELECTION_MAX_DEADLINE_MS } from '../contract/index.js'
import { type Budget, walkInventory } from '../inventory/index.js'
import { type Resource, upstreamDigestOf } from '../resources/index.js'
import { type SelectionContext, assertInScope } from './context.js'
import { keepBuilding } from './build-lease.js'
import { checkExclusionRules, firstMatchingRule } from './exclusions.js'
import { storeSeenFilter } from './freeze.js'
import { type FrozenRow, MemberWriter } from './member-writer.js'
import { parseRequest } from './parse-request.js'
import { selectionRequestSchema } from './schemas.js'
import { discard, freezeRow, insertBuilding, newSelectionId, type FreezeOnce, type SelectionKey } from './selection-row.js'
import type { ExclusionRule, FreezeProgress, SelectionCompleteness, SelectionOrigin, SelectionRequest } from './selection-service.js'
import { storedFieldsOf } from './stored-fields.js'
import { reportWalk } from '../telemetry/index.js'

/** A selection's walk goes to the end unless the request sets tighter limits (each is reported if reached). */
export const SELECTION_DEFAULT_BUDGET: Required<Budget> = { maxPages: 1_000_000, maxItems: 50_000_000, deadlineMs: 600_000 }

export interface FreezeRequest {
  readonly filter: Filter
  readonly exclude: readonly ExclusionRule[]
  readonly fields: readonly string[]
  readonly pageSize: number
  readonly budget: Budget
  readonly origin: SelectionOrigin | null
  readonly onProgress?: (progress: FreezeProgress) => void
  /** The caller stopped waiting (Ctrl-C): the walk stops and what it built is discarded, as on any failure. */
  readonly signal?: AbortSignal
  /** Freeze only if no equal selection was frozen meanwhile; else that one's id is returned and this walk discarded. */
  readonly once?: FreezeOnce
  /** The request's idempotency key (scoped) and fingerprint: the key is claimed before the walk (see idempotency.ts). */
  readonly keyed?: SelectionKey
}

/** A client's selection request once validated: what to walk, and the request in its canonical form (defaults filled). */
export interface PreparedRequest {
  readonly resource: Resource
  readonly freeze: Omit<FreezeRequest, 'origin' | 'onProgress' | 'signal' | 'once' | 'keyed'>
  readonly canonical: z.output<typeof selectionRequestSchema>
}

/** Validates a client's selection request against the schema, the actor's scope and the resource's field policy. */
export function prepareRequest(ctx: SelectionContext, actor: Actor, resourceName: string, request: SelectionRequest): PreparedRequest {
  const resource = ctx.catalogue.get(resourceName)
  assertInScope(actor, resourceName)
  const parsed = parseRequest(selectionRequestSchema, request, 'selection request')
  resource.policy.checkFilter(parsed.filter, 'filter')
  checkExclusionRules(resource, parsed.exclude)
  const fields = resource.policy.fields(parsed.fields)
  return {
    resource,
    canonical: parsed,
    freeze: {
      filter: parsed.filter,
      exclude: parsed.exclude,
      fields,
      pageSize: parsed.page_size,
      budget: {
        maxPages: parsed.budget.max_pages ?? SELECTION_DEFAULT_BUDGET.maxPages,
        maxItems: parsed.budget.max_items ?? SELECTION_DEFAULT_BUDGET.maxItems,
        deadlineMs: parsed.budget.deadline_ms ?? SELECTION_DEFAULT_BUDGET.deadlineMs,
      },
    },
  }
}

/**
 * Validates a client's selection request, walks and freezes it; returns the new selection's id. `follows`: the
 * selection it comes from (a retry), frozen once per `once` key.
 */
export async function createFromRequest(
  ctx: SelectionContext,
  actor: Actor,
  resourceName: string,
  request: SelectionRequest,
  onProgress?: (progress: FreezeProgress) => void,
  signal?: AbortSignal,
  follows?: { readonly origin: SelectionOrigin; readonly once: FreezeOnce },
): Promise<string> {
  const { resource, freeze } = prepareRequest(ctx, actor, resourceName, request)
  return freezeFromWalk(ctx, actor, resource, {
    ...freeze,
    origin: follows?.origin ?? null,
    ...(onProgress ? { onProgress } : {}),
    ...(signal ? { signal } : {}),
    ...(follows ? { once: follows.once } : {}),
  })
}

/** Walks the inventory and freezes what it returns; on any failure nothing is left behind. */
export async function freezeFromWalk(ctx: SelectionContext, actor: Actor, resource: Resource, request: FreezeRequest): Promise<string> {
  const id = newSelectionId()
  const started = ctx.clock()
  const stored = storedFieldsOf(resource.config, request.fields)
  await insertBuilding(ctx, id, actor, resource, request.filter, request.exclude, request.fields, started, request.origin, request.keyed)
  const lease = keepBuilding(ctx, id)
  // the caller's stop (Ctrl-C) or the lease lost to another process that declared this build abandoned
  const signal = request.signal ? AbortSignal.any([request.signal, lease.lost]) : lease.lost
  try {
    const writer = new MemberWriter(ctx.store, id, request.exclude.map((r) => r.rule), resource.config.group_by)
    const progress = { pages: 0, examined: 0, members: 0, excluded: 0 }
    // the walk starts now (no page yet): a recovery handed an earlier one never gets here, so never says it reads
    request.onProgress?.({ ...progress })
    const summary = await walkInventory(
      resource.connector,
      { resource: resource.name, filter: request.filter, fields: request.fields, pageSize: request.pageSize },
      request.budget,
      {
        // the continuation it keeps is bound where a search's is: to where, and by what id, the connector reads
        scope: { resource: resource.name, environment: resource.environment, visibility: resource.config.visibility.description, restricted: resource.config.visibility.restricted, upstream: upstreamDigestOf(resource.config) },
        cursorCodec: ctx.cursorCodec,
        // a selection is created again, never continued: its reasons must not point at the walk's cursor
        resumable: false,
        maxDeadlineMs: SELECTION_MAX_DEADLINE_MS,
        seen: storeSeenFilter(ctx.db, id, () => writer.flush()),
        ...(resource.maxRetryAfterSeconds === undefined ? {} : { maxRetryAfterSeconds: resource.maxRetryAfterSeconds }),
        signal,
      },
      async (page) => {
        const kept: FrozenRow[] = []
        const excluded: (FrozenRow & { rule: string })[] = []
        for (const record of page) {
          const row: FrozenRow = { id: record.id, version: record.version, fields: resource.policy.project(record.fields, stored), source: record.source }
          const rule = firstMatchingRule(request.exclude, record.fields, resource.config.fields)
          if (rule) excluded.push({ ...row, rule: rule.rule })
          else kept.push(row)
        }
        await writer.write(kept, excluded)
        signal.throwIfAborted()
        if (request.onProgress) {
          progress.pages += 1
          progress.examined += page.length
          progress.members += kept.length
          progress.excluded += excluded.length
          request.onProgress({ ...progress })
        }
      },
    )
    const digest = await writer.finish()
    // past the walk, but not yet frozen: a stop now still leaves nothing behind
    signal.throwIfAborted()
    reportWalk(resource.telemetry, resource.name, summary)
    resource.telemetry?.observe('warrant_selection_members', { resource: resource.name }, writer.count)
    const completeness: SelectionCompleteness = {
      status: summary.status,
      truncated: summary.truncated,
      incomplete_reasons: summary.incomplete_reasons,
      continuation: summary.continuation,
      warnings: summary.warnings,
      scope: summary.scope,
    }
    const frozen = await freezeRow(ctx, id, resource, writer, digest, summary.complete, summary.scope.consistent_snapshot, completeness, request.exclude, request.once)
    if (frozen !== id) await discard(ctx, id, `an equal selection (${frozen}) was frozen first`)
    return frozen
  } catch (error) {
    await discard(ctx, id, error)
    throw error
  } finally {
    lease.stop()
  }
}
