import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createAuditLog } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/**
 * `warrant audit query --operation op_typo` (a mistyped id, or an operation of another store's config) printed
 * "records changed (0)" and exited 0: the answer to "which records did this operation change?" read as "none" for an
 * operation the log has never seen. Asked of an operation no operation row and no accepted event names, it is
 * `not_found` (exit 2) naming the id and the store's config, human output and `--json` alike, even after a refused
 * command named the id.
 */
describe('warrant audit query --operation: an operation the log does not know is not found (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 5 })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const json of [false, true])
    test(`--operation op_typo${json ? ' --json' : ''}`, { timeout: 60_000 }, async () => {
      // a refused command that named the id leaves a row with it: still no operation of this store
      const refused = await ws.warrant(['operation', 'show', 'op_typo'])
      assert.notEqual(refused.code, 0)
      const r = await ws.warrant(['audit', 'query', '--operation', 'op_typo', ...(json ? ['--json'] : [])])
      assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /not_found: .*op_typo/, r.stderr)
      assert.doesNotMatch(r.stdout + r.stderr, /records changed \(0\)/)
    })
})

/**
 * The "not in this store" check took a row as refused only by `"outcome": "refused"`, while the listing's
 * `refused_claim` and who-asked (which decides the operation's plans) also take a 4xx status or an error code: a row
 * an earlier release's HTTP trail wrote for a refused `GET /v1/operations/op_old` (`{status: 404, path, error}`, no
 * outcome) was marked a refused claim and left out of who asked, yet made the operation "known": `records changed (0)`,
 * exit 0. One rule (`refused_claim`) now decides both.
 */
describe('warrant audit query --operation: a refusal written before refusals carried an outcome (real process, sqlite)', () => {
  test('is a refused claim there too: the operation is not found', { timeout: 60_000 }, async () => {
    const ws = await createCliWorkspace({ count: 5, edit: (raw) => void delete raw.audit })
    try {
      const first = await ws.warrant(['operation', 'show', 'op_old'])
      assert.notEqual(first.code, 0)
      await ws.withStore(async (store) => {
        const log = createAuditLog({ store, log: { error: () => undefined } })
        const actor: Actor = { principal: 'prn_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
        await log.record({ actor, action: 'GET /v1/operations/{id}', summary: { status: 404, path: '/v1/operations/op_old', error: 'not_found' }, operation_id: 'op_old' })
      })
      const listed = await ws.warrant(['audit', 'query', '--principal', 'prn_agent'])
      assert.match(listed.stdout, /GET \/v1\/operations\/\{id\}  \[refused claim/, 'the listing marks the row a refused claim')
      const r = await ws.warrant(['audit', 'query', '--operation', 'op_old'])
      assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`)
      assert.match(r.stderr, /not_found: .*op_old/, r.stderr)
      assert.doesNotMatch(r.stdout + r.stderr, /records changed \(0\)/)
    } finally {
      await ws.drop()
    }
  })
})
