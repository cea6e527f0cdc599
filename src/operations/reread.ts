import type { Connector, SourceRecord } from '../connectors/index.js'

/** Seconds a target waits after a 429 on a read whose connector passed on no Retry-After. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1

/** A record read by id around a write: found, gone, unreadable, or rate limited. */
export type Reread =
  | { readonly kind: 'found'; readonly record: SourceRecord }
  | { readonly kind: 'missing' }
  | { readonly kind: 'failed'; readonly message: string; readonly status?: number }
  /** `defaulted`: the upstream named no wait; `retryAfterSeconds` is ours (at most the operation's bound). `status`: 429, or 503 */
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number; readonly message: string; readonly defaulted?: true; readonly status?: number }

/**
 * Reads one record by id; `when` says, in a failure's message, whether the write is still to come. `source`: the
 * one its member was frozen from, where it is read alone (null or absent: by id across the sources).
 */
export async function rereadOne(connector: Connector, id: string, when: 'before' | 'after' = 'before', source?: string | null): Promise<Reread> {
  try {
    return rereadOf(await connector.readByIds([id], undefined, source === null || source === undefined ? undefined : new Map([[id, source]])), id, when)
  } catch (error) {
    return { kind: 'failed', message: failedRead(id, when, messageOf(error)) }
  }
}

export function rereadOf(result: Awaited<ReturnType<Connector['readByIds']>>, id: string, when: 'before' | 'after'): Reread {
  const record = result.records.get(id)
  if (record) return { kind: 'found', record }
  const failure = result.failed.find((f) => f.id === id)
  // the upstream's Retry-After where it gave one: retrying sooner only spends the target's retries
  if (failure && asksToWait(failure))
    return failure.retryAfterSeconds === undefined
      ? { kind: 'rate_limited', retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS, message: `re-reading "${id}": ${failure.message}`, defaulted: true }
      : { kind: 'rate_limited', retryAfterSeconds: failure.retryAfterSeconds, message: `re-reading "${id}": ${failure.message}`, status: failure.status! }
  if (failure) return { kind: 'failed', message: failedRead(id, when, failure.message), ...(failure.status === undefined ? {} : { status: failure.status }) }
  return { kind: 'missing' }
}

/**
 * A read that asked to be repeated later: a 429, or a 503 naming when (Retry-After). Either pauses the
 * operation and is read again, within the same bounds and retries; a 503 without a Retry-After is a failure,
 * as before (it says nothing of when to come back).
 */
export function asksToWait(failure: { readonly status?: number; readonly retryAfterSeconds?: number }): boolean {
  return failure.status === 429 || (failure.status === 503 && failure.retryAfterSeconds !== undefined)
}

function failedRead(id: string, when: 'before' | 'after', why: string): string {
  return when === 'before' ? `re-reading "${id}" before the write failed: ${why}; nothing was written` : `re-reading "${id}" after the write failed: ${why}`
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
