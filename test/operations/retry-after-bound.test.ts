import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { configSchema } from '../../src/config/index.js'
import { allResults } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withFaultGateway, type FaultGateway } from './support/fault-gateway.js'

/**
 * An upstream's Retry-After far in the future (`86400`, an HTTP-date a year ahead) paused the whole operation
 * that long, unbounded: it sat `running`, nobody told. A pause longer than `execution.max_retry_after_seconds`
 * (default 300) now halts the operation at once (`retry_after_too_long`, naming the seconds asked and the
 * bound); nothing is written twice or marked done: the target is pending again, or unknown where its write was
 * answered so (it may have landed; never retried once halted). Real loopback upstream; no
 * test here waits for a Retry-After (a halt that came from waiting would miss the 20 s bound on `finished`).
 */
const YEAR_AHEAD = () => new Date(Date.now() + 365 * 86_400_000).toUTCString()
const FIRST = userIdOf(1)

/** The operation over 2 users, one at a time, its view once finished (or failing after 20 s) and its audit. */
async function haltedRun(ctx: FaultGateway, key: string) {
  const id = await ctx.commit(key)
  const started = Date.now()
  const op = await ctx.finished(id)
  const results = await allResults(ctx.agent, id)
  const audit = await ctx.reviewer('GET', `/v1/audit?operation_id=${id}&limit=1000`)
  assert.equal(audit.status, 200, JSON.stringify(audit.body))
  return { op, results, events: audit.body.events as any[], took: Date.now() - started }
}

/** `writeSent`: the 429 answered the write itself, so the first target is unknown (never retried), not pending. */
function assertHaltedOnRetryAfter(run: Awaited<ReturnType<typeof haltedRun>>, ctx: FaultGateway, asked: RegExp, bound: number, writeSent: boolean) {
  const { op, results, events } = run
  assert.equal(op.state, 'halted', JSON.stringify(op))
  assert.equal(op.halt_reason?.rule, 'retry_after_too_long', JSON.stringify(op.halt_reason))
  assert.match(op.halt_reason.message, asked)
  assert.match(op.halt_reason.message, new RegExp(`max_retry_after_seconds \\(${bound} s\\)`))
  assert.equal(op.halt_reason.target_id, FIRST)
  const unknown = writeSent ? 1 : 0
  assert.deepEqual([op.counts.pending, op.counts.in_flight, op.counts.succeeded, op.counts.unknown], [2 - unknown, 0, 0, unknown], 'none lost or done')
  assert.deepEqual(results.map((r) => (r.outcome === 'pending' ? 'pending' : [r.outcome, r.reason])), [writeSent ? ['unknown', 'rate_limited_halted'] : 'pending', 'pending'], JSON.stringify(results))
  assert.equal(ctx.upstream.users.get(FIRST)!.version, 1, 'nothing applied upstream')
  const halted = events.find((e) => e.action === 'operation.halted')
  assert.ok(halted, `audit: ${events.map((e) => e.action).join(', ')}`)
  assert.equal(halted.summary.halt_reason.rule, 'retry_after_too_long')
}

describe('a Retry-After longer than max_retry_after_seconds halts the operation', () => {
  for (const [name, header, asked] of [
    ['86400 s', () => '86400', /86400 s/],
    ['an HTTP-date a year ahead', YEAR_AHEAD, /3153\d{4} s/],
  ] as const)
    test(`a write answered 429 with Retry-After ${name}: halted at once, the target pending, written once`, () =>
      withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        ctx.upstream.onWrite = (t) => (t.n === 1 ? t.send(429, { error: 'slow down' }, { 'retry-after': header() }) : t.send(...t.apply()))
        const run = await haltedRun(ctx, `write-${name}`)
        assertHaltedOnRetryAfter(run, ctx, asked, 300, true)
        assert.deepEqual(ctx.upstream.writeLog, [FIRST], 'one PATCH, the one refused; never sent again')
      }))

  // the batch's membership read (read 1 of the first user), or the target's own read before its write (read 2)
  for (const [name, limitedRead] of [['the batch membership read', 1], ['the pre-write re-read', 2]] as const)
    test(`${name} answered 429 with Retry-After 86400: halted at once, nothing written`, () =>
      withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        let reads = 0
        ctx.upstream.onReadAnswer = (id) => (id === FIRST && ++reads === limitedRead ? [429, { error: 'slow down' }, { 'retry-after': '86400' }] : undefined)
        const run = await haltedRun(ctx, `read-${limitedRead}`)
        assertHaltedOnRetryAfter(run, ctx, /86400 s/, 300, false)
        assert.deepEqual(ctx.upstream.writeLog, [], 'no PATCH sent')
      }))

  test('the bound is execution.max_retry_after_seconds: 1 s, a Retry-After of 5 halts', () =>
    withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10, max_retry_after_seconds: 1 }, async (ctx) => {
      ctx.upstream.onWrite = (t) => (t.n === 1 ? t.send(429, { error: 'slow down' }, { 'retry-after': '5' }) : t.send(...t.apply()))
      const run = await haltedRun(ctx, 'bound-1')
      assertHaltedOnRetryAfter(run, ctx, /5 s/, 1, true)
      assert.equal(run.op.stop_rules.max_retry_after_seconds, 1, 'the bound is fixed on the operation at commit')
    }))

  test('the config refuses a bound that is not a whole number of seconds in 0..86400, naming it', () => {
    assert.equal(configSchema.parse({ resources: {} }).execution.max_retry_after_seconds, 300)
    for (const bad of [-1, 1.5, 86_401, '300'])
      assert.throws(
        () => configSchema.parse({ resources: {}, execution: { max_retry_after_seconds: bad } }),
        (e: any) => /max_retry_after_seconds/.test(JSON.stringify(e.issues ?? e.message)),
        String(bad),
      )
  })
})

/**
 * A Retry-After that is neither seconds nor an HTTP-date (`x 2030`) was read by Date.parse as 1 January 2030:
 * the operation halted saying the upstream asked for years. It is an unusable header, as if absent. And a
 * write's 429 without a usable Retry-After waited the connector's 60 s default whatever the bound: with
 * `max_retry_after_seconds` below 60 every such 429 halted (`retry_after_too_long`, for a pause nobody asked
 * for). The default wait is now capped at the bound: a bound of 1 s waits 1 s and the write is tried again.
 */
describe('a write 429 without a usable Retry-After waits the default, at most the bound', () => {
  for (const [name, headers] of [
    ['no Retry-After', {}],
    ['Retry-After "x 2030"', { 'retry-after': 'x 2030' }],
  ] as const)
    test(`${name}, bound 1 s: paused 1 s, the write tried again, the operation succeeds`, () =>
      withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10, max_retry_after_seconds: 1 }, async (ctx) => {
        ctx.upstream.onWrite = (t) => (t.n === 1 ? t.send(429, { error: 'slow down' }, headers) : t.send(...t.apply()))
        const id = await ctx.commit(`unusable-${name}`)
        const started = Date.now()
        const op = await ctx.finished(id)
        assert.equal(op.state, 'succeeded', JSON.stringify(op))
        assert.equal(op.halt_reason, null)
        assert.ok(Date.now() - started < 15_000, 'waited about the bound, not 60 s')
        assert.deepEqual(ctx.upstream.writeLog, [FIRST, FIRST, userIdOf(2)], 'the refused write sent again once, then the next')
        assert.equal(ctx.upstream.users.get(FIRST)!.role, 'viewer')
      }))
})

/**
 * A Retry-After HTTP-date was compared with the process's Date.now(), not the gateway's clock: under an
 * injected clock (tests, a gateway whose clock is given) the same header meant another pause than the one the
 * executor waits by. With the gateway's clock an hour ahead of the process's, a date 2 s ahead of the gateway's
 * clock read as an hour (halted, retry_after_too_long); it is now 2 s, waited out, and the write goes through.
 */
describe('a Retry-After HTTP-date is read against the gateway clock', () => {
  test('gateway clock an hour ahead, Retry-After its now + 2 s: paused about 2 s, then written', () => {
    const OFFSET = 3_600_000
    const clock = () => new Date(Date.now() + OFFSET)
    return withFaultGateway(
      'sqlite',
      2,
      { concurrency: 1, batch_size: 10 },
      async (ctx) => {
        ctx.upstream.onWrite = (t) => (t.n === 1 ? t.send(429, { error: 'slow down' }, { 'retry-after': new Date(clock().getTime() + 2_000).toUTCString() }) : t.send(...t.apply()))
        const id = await ctx.commit('clock-date')
        const op = await ctx.finished(id)
        assert.equal(op.state, 'succeeded', JSON.stringify(op.halt_reason))
        assert.deepEqual(ctx.upstream.writeLog, [FIRST, FIRST, userIdOf(2)])
      },
      undefined,
      clock,
    )
  })
})
