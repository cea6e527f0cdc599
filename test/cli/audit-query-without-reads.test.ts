import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createAuditLog } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

// `warrant audit query` listed every status poll of a watched operation between the rows that acted, with no way to
// leave them out. `--without-reads` leaves the successful reads out in the query, as the operation page does, and
// says exactly how many it left out; a refused read is still listed.
describe('warrant audit query --without-reads (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 5, edit: (raw) => void delete raw.audit })
    // a first command creates the store's tables
    assert.equal((await ws.warrant(['audit', 'query', '--principal', 'prn_nobody'])).code, 0)
    await ws.withStore(async (store) => {
      const log = createAuditLog({ store, log: { error: () => undefined } })
      const actor: Actor = { principal: 'prn_watcher', name: 'watcher', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
      for (let i = 0; i < 6; i++) await log.record({ actor, action: 'GET /v1/operations/:id', summary: { status: 200, path: '/v1/operations/op_1', outcome: 'ok' }, operation_id: 'op_1' })
      await log.record({ actor, surface: 'mcp', action: 'mcp:get_operation', summary: { outcome: 'ok' }, operation_id: 'op_1' })
      await log.record({ actor, action: 'GET /v1/operations/:id', summary: { status: 404, path: '/v1/operations/op_2', outcome: 'refused', error: 'not_found' }, operation_id: 'op_2' })
      await log.record({ actor, action: 'POST /v1/plans/:id/commit', summary: { status: 202, outcome: 'ok' }, operation_id: 'op_1' })
    })
  })
  after(async () => {
    await ws?.drop()
  })

  test('--json: the rows that are not successful reads, and reads_left_out.count 7', { timeout: 60_000 }, async () => {
    const r = await ws.warrant(['audit', 'query', '--principal', 'prn_watcher', '--without-reads', '--json'])
    assert.equal(r.code, 0, r.stderr)
    const answer = JSON.parse(r.stdout) as { events: { action: string; summary: { outcome: string } }[]; reads_left_out: { count: number } }
    assert.deepEqual(answer.events.map((e) => `${e.action} ${e.summary.outcome}`), ['GET /v1/operations/:id refused', 'POST /v1/plans/:id/commit ok'])
    assert.equal(answer.reads_left_out.count, 7)
  })

  test('text: says how many reads it left out', { timeout: 60_000 }, async () => {
    const r = await ws.warrant(['audit', 'query', '--principal', 'prn_watcher', '--without-reads'])
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /7 successful reads left out \(--without-reads\)/)
    assert.equal(r.stdout.match(/GET \/v1\/operations/g)?.length, 1)
  })

  test('without the flag every row is listed and nothing is said left out', { timeout: 60_000 }, async () => {
    const r = await ws.warrant(['audit', 'query', '--principal', 'prn_watcher', '--json'])
    const answer = JSON.parse(r.stdout) as { events: unknown[]; reads_left_out?: unknown }
    assert.equal(answer.events.length, 9)
    assert.equal(answer.reads_left_out, undefined)
  })
})
