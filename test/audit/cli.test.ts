import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { parse as parseYaml, stringify as toYaml } from 'yaml'
import { createAuditLog, hashAuditRow } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { ensureDemoData } from '../../src/demo/index.js'
import { createStore, type Store } from '../../src/store/index.js'
import { createTempDir, type TempDir } from '../support/stores.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const ENTRY = fileURLToPath(new URL('./cli-entry.ts', import.meta.url))

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', ENTRY, ...args], { cwd: ROOT, env: { ...process.env, WARRANT_LOG_LEVEL: 'silent' } }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })
}

const reviewer: Actor = { principal: 'prn_alice', name: 'alice', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'ui' }
const agent: Actor = { principal: 'prn_agent', name: 'ci-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: '*' }, surface: 'mcp' }

describe('warrant audit (CLI, sqlite store)', () => {
  let dir: TempDir
  let config: string
  let store: Store
  before(async () => {
    dir = await createTempDir('warrant-audit-cli-')
    const raw = parseYaml(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as Record<string, any>
    raw.store = 'sqlite:./warrant.db'
    raw.resources.subscriptions.connector.url = 'sqlite:./demo.db'
    delete raw.audit // rows below are written without a key: this suite is about the unkeyed chain
    config = join(dir.path, 'warrant.yaml')
    writeFileSync(config, toYaml(raw))
    await ensureDemoData({ url: `sqlite:${join(dir.path, 'demo.db')}`, count: 20 })
    store = await createStore({ url: `sqlite:${join(dir.path, 'warrant.db')}` })
    const { error } = await store.migrate()
    assert.equal(error, undefined)
    const audit = createAuditLog({ store })
    await audit.record({ actor: agent, action: 'mcp:propose_change', plan_id: 'plan_1', selection_id: 'sel_1', summary: { action: 'pause_collection' } })
    await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: 'plan_1', details: { decision: 'approve' } })
    await audit.record({ actor: agent, action: 'mcp:commit_change', plan_id: 'plan_1', operation_id: 'op_1' })
    audit.recordCall({ source: 'billing-demo-db', method: 'UPDATE', endpoint: 'subscriptions', targetId: 'sub_7', status: null, outcome: 'written', durationMs: 2, operation_id: 'op_1' })
    audit.recordCall({ source: 'billing-demo-db', method: 'UPDATE', endpoint: 'subscriptions', targetId: 'sub_8', status: null, outcome: 'conflict', durationMs: 2, operation_id: 'op_1' })
    await audit.flush()
  })
  after(async () => {
    await store?.close()
    await dir?.drop()
  })

  test('verify, export and query on an intact log', async () => {
    const out = join(dir.path, 'audit.ndjson')
    const [verify, exported, query, text, wrong] = await Promise.all([
      cli('audit', 'verify', '--config', config),
      cli('audit', 'export', '--config', config, '--output', out),
      cli('audit', 'query', '--operation', 'op_1', '--json', '--config', config),
      cli('audit', 'query', '--principal', 'prn_alice', '--config', config),
      cli('audit', 'query', '--config', config),
    ])
    assert.equal(verify.code, 0, verify.stderr)
    assert.match(verify.stdout, /intact: 5 rows/)

    assert.equal(exported.code, 0, exported.stderr)
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l))
    assert.equal(lines.pop().format, 'warrant-audit-export/1', 'the export ends with the chain head')
    assert.deepEqual(lines.map((l) => l.seq), [1, 2, 3, 4, 5])
    assert.ok(lines.every((l) => hashAuditRow(l) === l.hash))

    assert.equal(query.code, 0, query.stderr)
    const answer = JSON.parse(query.stdout)
    assert.deepEqual(answer.events.map((e: any) => e.seq), [3, 4, 5])
    assert.deepEqual(answer.who_asked.approvals.map((a: any) => [a.principal, a.decision]), [['prn_alice', 'approve']])
    assert.deepEqual(answer.who_asked.requesters.map((r: any) => r.principal), ['prn_agent'])
    assert.deepEqual(answer.records_changed.map((r: any) => r.target_id), ['sub_7'])

    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /POST \/v1\/plans\/\{id\}\/approvals/)

    assert.equal(wrong.code, 2)
    assert.match(wrong.stderr, /invalid_request/)
  })

  test('verify exits 3 and prints the first bad row when the chain is broken', async () => {
    await sql`update audit_events set principal = 'prn_mallory' where seq = 2`.execute(store.db)
    try {
      const broken = await cli('audit', 'verify', '--config', config)
      assert.equal(broken.code, 3)
      assert.match(broken.stdout, /BROKEN at seq 2 \(altered\)/)
      assert.match(broken.stdout, /prn_mallory/)
      assert.match(broken.stderr, /conflict: audit chain broken at seq 2/)
    } finally {
      await sql`update audit_events set principal = 'prn_alice' where seq = 2`.execute(store.db)
    }
  })
})
