import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { parseConfigInput, problemKeys } from '../support/config-input.js'
import { startGatewayOn, type GatewayFixture } from '../support/gateway-fixture.js'
import { openAndStall } from '../support/stalled-client.js'
import { STORE_KINDS } from '../support/stores.js'
import { until } from '../support/until.js'
import { DOC_COUNT, startStalledSearchUpstreams, upstreamHeld, type StalledSearchUpstreams } from './search-stalled-upstreams.js'

/**
 * A client that sends a search, reads the answer's headers and a little of it, then stops reading and holds the
 * connection (a raw socket: test/support/stalled-client.ts). On three upstreams (search-stalled-upstreams.ts): a
 * `sql` resource on a SQLite file in WAL mode that its application keeps open, one on PostgreSQL, an `http`
 * resource on a node:http API; records of ~8 KB, far more than the sockets and the stream's queue take in.
 *
 * Before: the walk waited for the client for as long as it held the connection, inside its read transaction: the
 * SQLite file's checkpoints were held back (busy 1, none of 6,259 WAL frames checkpointed 4 s in) and PostgreSQL
 * had a session `idle in transaction` holding backend_xmin; the walk's deadline_ms (2 s) did not end it; the
 * request had no audit row until the client read again.
 */
const STALL_MS = 1000
const ACTION = 'POST /v1/resources/:resource/search'
type Gw = Omit<GatewayFixture, 'dir' | 'upstreamUrl' | 'storeUrl'>

for (const kind of STORE_KINDS)
  describe(`a search a client stops reading (${kind} store)`, () => {
    let up: StalledSearchUpstreams
    let gw: Gw
    /** the same upstreams behind a gateway that waits for a stalled client far longer than a walk's deadline */
    let patient: Gw
    before(async () => {
      up = await startStalledSearchUpstreams(kind)
      gw = await startGatewayOn(parseConfig({ store: up.stores[0], server: { stream_stall_timeout_ms: STALL_MS }, resources: up.resources }), { resources: ['lite', 'pgup', 'web'] })
      patient = await startGatewayOn(parseConfig({ store: up.stores[1], server: { stream_stall_timeout_ms: 600_000 }, resources: up.resources }), { resources: ['lite', 'pgup', 'web'] })
    })
    after(async () => {
      await gw?.close()
      await patient?.close()
      await up?.close()
    })

    /** the search rows of `path` written so far, read straight from the store (no flush) */
    const rowsOf = async (on: Gw, path: string) =>
      (await on.gateway.store.db.selectFrom('audit_events').select(['seq', 'summary']).where('action', '=', ACTION).orderBy('seq').execute()).map((r) => JSON.parse(r.summary)).filter((s) => s.path === path)
    const stall = (on: Gw, name: string, budget: Record<string, number>) =>
      openAndStall(on.base, `/v1/resources/${name}/search`, { authorization: `Bearer ${on.tokens.agent}`, connection: 'close' }, 64 * 1024, {
        method: 'POST',
        body: JSON.stringify({ filter: {}, page_size: 500, budget: { max_items: 100_000, ...budget } }),
      })

    for (const name of ['lite', 'pgup', 'web'] as const)
      test(`${name}: a client that reads nothing for the stall timeout is cut: socket closed, upstream read released, the row client_stalled; what it got is no answer`, async () => {
        const path = `/v1/resources/${name}/search`
        const seen = (await rowsOf(gw, path)).length
        const client = await stall(gw, name, { deadline_ms: 300_000 })
        try {
          assert.match(client.head, /^HTTP\/1\.1 200/)
          await until(async () => (await rowsOf(gw, path)).length > seen, `the audit row of the stalled search on ${name}`)
          const row = (await rowsOf(gw, path)).at(-1)!
          assert.equal(row.outcome, 'failed', JSON.stringify(row))
          assert.equal(row.stopped, 'client_stalled')
          assert.ok(row.answer.items < DOC_COUNT, JSON.stringify(row.answer))
          assert.equal(row.answer.complete, undefined, 'a cut answer says nothing of completeness')
          // the gateway let go of the connection, and of the user's database
          await until(() => gw.serverSocket(client.localPort) === undefined, 'the server closing the stalled connection')
          if (name !== 'web') await until(async () => !(await upstreamHeld(up, name)).held, `the read on ${name} released`)
          // what the client gets when it reads again: a body with no end, which no JSON reader takes for an answer
          const body = await client.readRest()
          assert.ok(body.startsWith('10000\r\n{"items":[') || /^[0-9a-f]+\r\n\{"items":\[/.test(body), body.slice(0, 40))
          assert.ok(!body.endsWith('0\r\n\r\n'), 'no last chunk: the answer was cut, not ended')
          assert.ok(!body.includes('"complete"'), 'the envelope end never sent')
        } finally {
          client.leave()
        }
        await gw.gateway.audit.flush()
        assert.equal((await rowsOf(gw, path)).length, seen + 1, 'one row: the search ended once')
      })

    for (const name of ['lite', 'pgup'] as const)
      test(`${name}: the walk's deadline ends it while its client is stalled: the read released, the end queued after the items`, async () => {
        const path = `/v1/resources/${name}/search`
        const seen = (await rowsOf(patient, path)).length
        const client = await stall(patient, name, { deadline_ms: 1000 })
        try {
          // released while the client still reads nothing (its wait is ten minutes)
          await until(async () => !(await upstreamHeld(up, name)).held, `the read on ${name} released at the walk's deadline`)
          assert.ok(patient.serverSocket(client.localPort), 'the connection is still the client’s')
          const body = await client.readRest()
          const text = body.split('\r\n').filter((_, i) => i % 2 === 1).join('')
          const answer = JSON.parse(text)
          assert.equal(answer.complete, false)
          assert.ok(answer.incomplete_reasons.some((r: { code: string }) => r.code === 'TIME_BUDGET_EXCEEDED'), JSON.stringify(answer.incomplete_reasons))
          assert.ok(answer.items.length > 0 && answer.items.length < DOC_COUNT)
          assert.equal(typeof answer.continuation?.cursor, 'string')
        } finally {
          client.leave()
        }
        await until(async () => (await rowsOf(patient, path)).length > seen, 'the row')
        const row = (await rowsOf(patient, path)).at(-1)!
        assert.equal(row.outcome, 'ok')
        assert.deepEqual(row.answer.incomplete, ['TIME_BUDGET_EXCEEDED'])
      })
  })

test('server.stream_stall_timeout_ms is a whole number of milliseconds from 100 to 3600000; anything else is refused naming the key', () => {
  for (const value of [50, 3_600_001, 1.5, '60s']) {
    const input = parseConfigInput()
    input.server = { stream_stall_timeout_ms: value }
    assert.deepEqual(problemKeys(() => parseConfig(input)), ['server.stream_stall_timeout_ms'], String(value))
  }
  const input = parseConfigInput()
  input.server = { stream_stall_timeout_ms: 100 }
  assert.equal(parseConfig(input).server.stream_stall_timeout_ms, 100)
})
