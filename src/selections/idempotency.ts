import { type Actor, WarrantError, checkIdempotencyKey, digestOf, scopedIdempotencyKey } from '../contract/index.js'
import { reapAbandoned } from './build-lease.js'
import type { SelectionContext } from './context.js'
import { KeyTaken, type SelectionKey } from './selection-row.js'
import type { FreezeProgress, SelectionRequest } from './selection-service.js'
import { freezeFromWalk, prepareRequest } from './walk.js'

/**
 * A selection request with an idempotency key, as commits take one (operations/commit.ts): the same key, principal
 * and canonical request name one selection. What is true of a key:
 * - its first request's selection, once frozen, is the answer to every later request with it: handed back
 *   (`created: false`), nothing walked again, whatever it holds (an incomplete or expired one included: that is
 *   what the request made; a new walk is a new key);
 * - while that selection is still being built, the key is `idempotency_in_progress` (409): one walk, not two;
 * - with another request (resource, filter, exclusions, fields, page size or budget, defaults filled in) it is
 *   `idempotency_key_reused` (422), naming the key, and nothing is changed;
 * - a first request that failed (the upstream could not be read, the walk was stopped or its builder died) left
 *   no selection, so the key is free: the next request with it walks as if it were new;
 * - it is the principal's own: another principal's equal key is another key, and never reveals this one's selection.
 */
export async function createKeyed(
  ctx: SelectionContext,
  actor: Actor,
  resourceName: string,
  request: SelectionRequest,
  options: { readonly idempotencyKey?: string | null; readonly onProgress?: (progress: FreezeProgress) => void; readonly signal?: AbortSignal },
): Promise<{ readonly id: string; readonly created: boolean }> {
  const { resource, freeze, canonical } = prepareRequest(ctx, actor, resourceName, request)
  const walk = (keyed?: SelectionKey) =>
    freezeFromWalk(ctx, actor, resource, {
      ...freeze,
      origin: null,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(keyed ? { keyed } : {}),
    })
  if (options.idempotencyKey === undefined || options.idempotencyKey === null) return { id: await walk(), created: true }
  const given = checkIdempotencyKey(options.idempotencyKey)
  const keyed: SelectionKey = { key: scopedIdempotencyKey(actor, given), fingerprint: digestOf({ route: 'selection', resource: resource.name, body: canonical }) }
  // Twice at most: a key found free after its holder failed (removed, or reaped just now) is claimed again once; a
  // third loss means requests with it keep racing, which is in progress by any reading.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const earlier = await answerOf(ctx, keyed, given)
    if (earlier !== null) return { id: earlier, created: false }
    try {
      return { id: await walk(keyed), created: true }
    } catch (error) {
      if (!(error instanceof KeyTaken)) throw error
    }
  }
  throw inProgress(given, null)
}

/** The selection a key already names (frozen), or null when the key is free; refuses a key in use otherwise. */
async function answerOf(ctx: SelectionContext, keyed: SelectionKey, given: string): Promise<string | null> {
  const row = await ctx.db.selectFrom('selections').select(['id', 'state', 'request_fingerprint']).where('idempotency_key', '=', keyed.key).executeTakeFirst()
  if (!row) return null
  if (row.request_fingerprint !== keyed.fingerprint)
    throw new WarrantError(
      'idempotency_key_reused',
      `the Idempotency-Key "${given}" was used for a different selection request (selection ${row.id}); use a new key for a new selection, and this one only to repeat exactly that request`,
      { idempotency_key: given, selection_id: row.id },
    )
  if (row.state === 'building') {
    // a builder that died mid-walk never finishes: marked failed (which frees the key), and this request walks
    if ((await reapAbandoned(ctx, row.id)).length === 0) throw inProgress(given, row.id)
    return null
  }
  if (row.state === 'failed') {
    // marked failed before failures freed their key: freed now, conditionally, so one request claims it
    await ctx.db.updateTable('selections').set({ idempotency_key: null }).where('id', '=', row.id).where('state', '=', 'failed').execute()
    return null
  }
  return row.id
}

function inProgress(given: string, selectionId: string | null): WarrantError {
  return new WarrantError(
    'idempotency_in_progress',
    `the selection the Idempotency-Key "${given}" names${selectionId === null ? '' : ` (${selectionId})`} is still being built by an earlier request with that key; nothing new was started. Ask again with the same key once it is frozen`,
    { idempotency_key: given, ...(selectionId === null ? {} : { selection_id: selectionId }) },
  )
}
