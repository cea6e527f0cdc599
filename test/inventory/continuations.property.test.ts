import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { DECISIONS, REASON_CODES, USES, decide, envelopeSchema, type Envelope } from '../../src/contract/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { searchAll, type WalkedRecord } from '../../src/inventory/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { TEST_SCOPE, testCodec } from './helpers.js'

/**
 * Issue 13's property, on real loopback upstreams whose answers are generated request by request: following any
 * continuation Warrant returns never sends an upstream a request identical to one that just failed permanently,
 * no sequence of continuations loops, and every verdict is one of the four, resting on the envelope's reasons.
 */

const NUM_RUNS = Number(process.env.WARRANT_PROPERTY_RUNS ?? 60)

const ANSWERS = ['ok', 'ok', 'ok', 401, 403, 404, 400, 422, 410, 302, 'html', 'garbage', 500, 503, '503-retry-after', 429] as const
type Answer = (typeof ANSWERS)[number]
/** Answers the same request would get again: after one, that request must never be sent again. */
const PERMANENT: ReadonlySet<Answer> = new Set<Answer>([401, 403, 404, 400, 422, 410, 302, 'html', 'garbage'])

interface Scenario {
  readonly style: 'cursor' | 'offset'
  readonly sizes: readonly number[]
  readonly scripts: readonly (readonly Answer[])[]
  readonly pageSize: number
  readonly maxPages: number
}

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    style: fc.constantFrom('cursor' as const, 'offset' as const),
    sizes: fc.array(fc.integer({ min: 0, max: 14 }), { minLength: 1, maxLength: 2 }),
    pageSize: fc.integer({ min: 2, max: 5 }),
    maxPages: fc.integer({ min: 1, max: 6 }),
    scripts: fc.array(fc.array(fc.constantFrom(...ANSWERS), { maxLength: 12 }), { minLength: 2, maxLength: 2 }),
  })
  .map((s) => ({ ...s, scripts: s.scripts.slice(0, s.sizes.length) }))

describe('issue 13 property: continuations never repeat a permanently failed request, and always end', () => {
  let scenario: Scenario
  const upstreams: TestUpstream[] = []
  const answered: { url: string; answer: Answer }[][] = [[], []]

  before(async () => {
    for (let s = 0; s < 2; s++) {
      upstreams.push(
        await startUpstream((req, res) => {
          const log = answered[s]!
          const answer: Answer = scenario.scripts[s]?.[log.length] ?? 'ok'
          log.push({ url: req.rawUrl, answer })
          const items = collection(scenario.sizes[s] ?? 0)
          switch (answer) {
            case 'ok':
              break
            case 302:
              res.writeHead(302, { location: '/elsewhere' })
              return res.end()
            case 'html':
              res.writeHead(200, { 'content-type': 'text/html' })
              return res.end('<html>maintenance</html>')
            case 'garbage':
              return sendJson(res, 200, { nothing: 'here' })
            case '503-retry-after':
              return sendJson(res, 503, { error: 'busy' }, { 'retry-after': '3' })
            case 429:
              return sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '5' })
            default:
              return sendJson(res, answer, { error: { code: `e${answer}`, message: `generated ${answer}` } })
          }
          if (scenario.style === 'cursor') {
            const at = Number(req.url.searchParams.get('cursor') ?? 0)
            const size = Number(req.url.searchParams.get('limit'))
            return sendJson(res, 200, { items: items.slice(at, at + size), next_cursor: at + size < items.length ? String(at + size) : null })
          }
          const offset = Number(req.url.searchParams.get('offset') ?? 0)
          const limit = Number(req.url.searchParams.get('limit'))
          sendJson(res, 200, { items: items.slice(offset, offset + limit), total: items.length })
        }),
      )
    }
  })
  after(async () => {
    for (const u of upstreams) await u.close()
  })

  it('holds for generated upstream answers, budgets and pagination styles', async () => {
    let permanentSeen = 0
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        scenario = s
        for (const log of answered) log.length = 0
        const connector = createHttpConnector({
          resource: httpResource({
            sources: s.sizes.map((_, i) => ({ name: `s${i}`, base_url: upstreams[i]!.origin })),
            list: {
              path: '/items',
              page_size_param: 'limit',
              pagination: s.style === 'cursor' ? { style: 'cursor' } : { style: 'offset' },
              ...(s.style === 'offset' ? { total_path: 'total' } : {}),
            },
          }),
        })
        const codec = testCodec()
        let clock = Date.parse('2025-03-08T14:20:11Z')
        let cursor: string | null = null
        let calls = 0
        for (;;) {
          calls += 1
          assert.ok(calls <= 40, 'a sequence of continuations loops')
          const part: Envelope<WalkedRecord> = await searchAll(
            connector,
            { resource: 'items', filter: {}, pageSize: s.pageSize, cursor },
            { maxPages: s.maxPages },
            { scope: TEST_SCOPE, cursorCodec: codec, clock: { now: () => clock } },
          )
          assertVerdicts(part)
          const c = part.continuation
          cursor = c && 'cursor' in c && typeof c.cursor === 'string' ? c.cursor : null
          if (cursor === null) break
          if (c?.kind === 'retry_after') clock = Date.parse(c.not_before)
        }
        for (const log of answered) {
          log.forEach((entry, i) => {
            if (!PERMANENT.has(entry.answer)) return
            permanentSeen += 1
            const again = log.slice(i + 1).find((later) => later.url === entry.url)
            assert.equal(again, undefined, `${entry.url} answered ${entry.answer} and was sent again`)
          })
        }
      }),
      { numRuns: NUM_RUNS },
    )
    assert.ok(permanentSeen > 0, 'the generator produced permanent failures')
  })
})

/** Every verdict is one of the four and rests on exactly the envelope's reasons, each of which is named and explained. */
function assertVerdicts(part: Envelope<WalkedRecord>): void {
  const parsed = envelopeSchema.safeParse(part)
  assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues))
  const codes = part.incomplete_reasons.map((r) => r.code)
  for (const r of part.incomplete_reasons) {
    assert.ok(REASON_CODES.includes(r.code))
    assert.ok(r.message.length > 0)
    if (r.upstream_status !== undefined) assert.doesNotMatch(r.message, /did not answer/, 'a source that answered an error status is not "did not answer"')
  }
  for (const use of USES) {
    const verdict = decide(part, use)
    assert.ok(DECISIONS.includes(verdict.decision))
    assert.ok(verdict.reason.length > 0)
    assert.deepEqual(verdict.codes, codes)
    if (!part.complete && use !== 'report' && use !== 'investigate') assert.notEqual(verdict.decision, 'proceed')
    if (use === 'prove_absence' && verdict.decision === 'continue_search') assert.ok(part.continuation && part.continuation.kind !== 'retry_after')
    if (use === 'prove_absence' && verdict.decision === 'retry_later') assert.ok(!codes.includes('VISIBILITY_RESTRICTED'))
  }
}
