import assert from 'node:assert/strict'
import { TRUNCATING_REASONS, envelopeSchema, type Envelope } from '../../src/contract/index.js'
import type { Connector } from '../../src/connectors/connector.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import {
  createCursorCodec,
  searchAll,
  type Budget,
  type CursorCodec,
  type SearchOptions,
  type SearchQuery,
  type WalkedRecord,
} from '../../src/inventory/index.js'

export const TEST_CURSOR_KEY = 'test-cursor-key-0123456789abcdef-0123456789'

export const TEST_SCOPE = {
  resource: 'subscriptions',
  environment: 'model (test)',
  visibility: 'records readable by credential model-ro',
  restricted: false,
} as const

export function testCodec(clock?: { now(): number }): CursorCodec {
  return createCursorCodec({ key: TEST_CURSOR_KEY, ...(clock ? { clock } : {}) })
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.parse('2025-03-08T14:20:11Z')): { now(): number; advance(ms: number): void } {
  let t = start
  return {
    now: () => t,
    advance(ms: number) {
      t += ms
    },
  }
}

export type Walk = (query?: Partial<SearchQuery>, budget?: Budget, options?: Partial<SearchOptions>) => Promise<Envelope<WalkedRecord>>

/** `searchAll` with the test scope and codec, every result checked against the envelope's invariants. */
export function walker(connector: Connector, defaults: { codec?: CursorCodec; clock?: { now(): number } } = {}): Walk {
  const codec = defaults.codec ?? testCodec(defaults.clock)
  return async (query = {}, budget = {}, options = {}) => {
    const result = await searchAll(
      connector,
      { resource: 'subscriptions', filter: {}, ...query },
      budget,
      { scope: TEST_SCOPE, cursorCodec: codec, ...(defaults.clock ? { clock: defaults.clock } : {}), ...options },
    )
    assertEnvelope(result)
    return result
  }
}

/** The envelope validates, and `truncated` is true exactly when a truncating reason is present. */
export function assertEnvelope(result: Envelope<WalkedRecord>): void {
  const parsed = envelopeSchema.safeParse(result)
  assert.ok(parsed.success, `envelope invalid: ${parsed.success ? '' : JSON.stringify(parsed.error.issues)}`)
  assert.equal(result.truncated, result.incomplete_reasons.some((r) => TRUNCATING_REASONS.has(r.code)))
  assert.equal(result.page.returned, result.items.length)
}

/** The cursor a continuation carries, if any. */
export function cursorOf(result: Envelope<unknown>): string | null {
  const c = result.continuation
  if (!c) return null
  return 'cursor' in c && typeof c.cursor === 'string' ? c.cursor : null
}

/** Follows continuation cursors until none is left, at most `maxCalls` calls. */
export async function followToEnd(
  walk: Walk,
  query: Partial<SearchQuery> = {},
  budget: Budget = {},
  options: Partial<SearchOptions> = {},
  maxCalls = 1000,
): Promise<{ parts: Envelope<WalkedRecord>[]; items: WalkedRecord[]; last: Envelope<WalkedRecord> }> {
  const parts: Envelope<WalkedRecord>[] = []
  let cursor: string | null = null
  const waited = waitingClock(options.clock)
  for (let i = 0; i < maxCalls; i++) {
    const part = await walk({ ...query, cursor }, budget, { ...options, clock: waited })
    parts.push(part)
    cursor = cursorOf(part)
    waited.waitFor(part)
    if (cursor === null) return { parts, items: parts.flatMap((p) => [...p.items]), last: part }
  }
  throw new Error(`the walk did not end within ${maxCalls} calls`)
}

/**
 * A clock that jumps past a `retry_after` continuation's `not_before`, as a caller that waits would: a
 * continuation followed earlier is refused.
 */
export function waitingClock(base: { now(): number } = { now: () => Date.now() }): { now(): number; waitFor(part: Envelope<unknown>): void } {
  let skipped = 0
  return {
    now: () => base.now() + skipped,
    waitFor(part) {
      const c = part.continuation
      if (c?.kind !== 'retry_after') return
      skipped += Math.max(0, Date.parse(c.not_before) - (base.now() + skipped))
    },
  }
}

/** `walker` over the http connector, one cursor-paged source per name (`name → origin`), each listing `/items`. */
export function httpWalker(sources: Readonly<Record<string, string>>): Walk {
  return walker(
    createHttpConnector({
      resource: httpResource({
        sources: Object.entries(sources).map(([name, base_url]) => ({ name, base_url })),
        list: { path: '/items', pagination: { style: 'cursor' } },
      }),
    }),
  )
}
