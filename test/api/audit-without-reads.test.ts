import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

type Row = { seq: number; level: string; action: string; summary: { outcome?: string; error?: string } }
const READ_ACTIONS = ['mcp:get_operation', 'mcp:get_plan', 'mcp:read_selection', 'mcp:search', 'mcp:list_resources', 'cli:operation show', 'cli:operation watch', 'cli:operation results', 'cli:search', 'cli:audit verify', 'cli:audit export', 'cli:audit query', 'cli:token list', 'cli:principal list']
const isSuccessfulRead = (e: Row) =>
  e.level === 'run' && (/^(GET|HEAD) /.test(e.action) || READ_ACTIONS.includes(e.action)) && e.summary?.outcome === 'ok' && e.summary.error === undefined

// GET /v1/audit had no way to leave out successful reads, which the operation page has: an operation watched for an
// hour is thousands of status polls around a handful of rows that acted. `without_reads=true` leaves them out in the
// query (a page is still `limit` rows) and says exactly how many it left out; a value that is no boolean is 400.
describe('GET /v1/audit?without_reads=true', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  test('leaves out exactly the successful reads, counted, paged or not; a refused read stays', async () => {
    const { fx } = env
    const agent = fx.as('agent')
    for (let i = 0; i < 7; i++) assert.equal((await agent('GET', '/v1/resources')).status, 200)
    for (let i = 0; i < 3; i++) assert.equal((await agent('GET', `/v1/operations/op_nope${i}`)).status, 404)
    assert.equal((await agent('POST', '/v1/resources/subscriptions/search', { filter: { status: 'past_due' }, budget: { max_pages: 1 } })).status, 200)
    const admin = fx.as('admin')
    const full = await admin('GET', '/v1/audit?level=run&limit=1000')
    assert.equal(full.status, 200)
    const all = full.body.events as Row[]
    const reads = all.filter(isSuccessfulRead)
    assert.ok(reads.length >= 7)
    // the full listing's own request is a successful read recorded after it: one more left out
    const without = await admin('GET', '/v1/audit?level=run&limit=1000&without_reads=true')
    assert.equal(without.status, 200, JSON.stringify(without.body))
    assert.deepEqual((without.body.events as Row[]).map((e) => e.seq), all.filter((e) => !isSuccessfulRead(e)).map((e) => e.seq))
    assert.ok((without.body.events as Row[]).some((e) => e.action === 'GET /v1/operations/:id'), 'the refused read is listed')
    assert.equal(without.body.reads_left_out.count, reads.length + 1)

    // paged two rows at a time: the pages' counts add up to every read left out up to the last page's head
    let total = 0
    const seqs: number[] = []
    let cursor: number | null = null
    let pages = 0
    do {
      const page = await admin('GET', `/v1/audit?level=run&limit=2&without_reads=true${cursor === null ? '' : `&cursor=${cursor}`}`)
      assert.equal(page.status, 200)
      seqs.push(...(page.body.events as Row[]).map((e) => e.seq))
      total += page.body.reads_left_out.count
      cursor = page.body.next_cursor
      pages++
    } while (cursor !== null)
    assert.ok(pages > 1)
    const after = (await admin('GET', '/v1/audit?level=run&limit=1000')).body.events as Row[]
    const last = seqs.at(-1)!
    const readsThen = after.filter((e) => isSuccessfulRead(e))
    // every row up to the head the last page read is either listed or counted: the listed ones and the reads
    assert.deepEqual(seqs, after.filter((e) => !isSuccessfulRead(e) && e.seq <= last).map((e) => e.seq))
    // the last row listed is the last page's own request, recorded after that page's head was read: not counted there
    assert.equal(after.at(-1)!.action, 'GET /v1/audit')
    assert.equal(total, readsThen.length - 1)
  })

  test('without_reads=false lists every row and says nothing left out', async () => {
    const page = await env.fx.as('admin')('GET', '/v1/audit?level=run&limit=5&without_reads=false')
    assert.equal(page.status, 200)
    assert.equal(page.body.reads_left_out, undefined)
  })

  test('a value that is no boolean is refused 400 naming without_reads', async () => {
    for (const value of ['maybe', '1', 'TRUE', '']) {
      const page = await env.fx.as('admin')('GET', `/v1/audit?without_reads=${value}`)
      assert.equal(page.status, 400, value)
      assert.equal(page.body.error.code, 'invalid_request')
      assert.match(page.body.error.message, /without_reads/, value)
    }
  })
})
