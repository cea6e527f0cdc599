import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createAuditLog, parseAuditKeys } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace, runWarrant } from '../support/cli-config.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }

/**
 * `warrant audit export` wrote the rows only: nothing in the file said where the chain ended, so a copy with its last
 * rows cut off was as whole as the original, and nothing verified a file away from the store. The export now ends
 * with a line holding the chain head (signed where the chain is keyed), and `warrant audit verify --file EXPORT`
 * verifies such a file without the store, through the same chain verification as the store's.
 */
describe('warrant audit verify --file (real processes, a signed chain, sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let exported: string
  let lines: string[]
  before(async () => {
    ws = await createCliWorkspace({ count: 5 })
    writeFileSync(join(ws.dir, 'audit.key'), `${K1}\n`, { mode: 0o600 })
    const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
    try {
      assert.equal((await store.migrate()).error, undefined)
      const audit = createAuditLog({ store, keyring: parseAuditKeys(K1, 'test') })
      for (let i = 0; i < 6; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
    } finally {
      await store.close()
    }
    exported = join(ws.dir, 'audit.ndjson')
    const r = await ws.warrant(['audit', 'export', '-o', exported])
    assert.equal(r.code, 0, r.stderr)
    lines = readFileSync(exported, 'utf8').trimEnd().split('\n')
  })
  after(async () => {
    await ws?.drop()
  })

  /** Writes a changed copy of the export and verifies it with the workspace's key. */
  async function verifyCopy(name: string, text: string) {
    const file = join(ws.dir, name)
    writeFileSync(file, text)
    return runWarrant(['audit', 'verify', '--file', file, '--config', ws.configPath], ws.dir)
  }

  test('the export ends with the signed head, and verifies offline', async () => {
    const end = JSON.parse(lines.at(-1)!)
    assert.equal(end.format, 'warrant-audit-export/1')
    assert.equal(end.rows, 6)
    assert.equal(end.head.seq, 6)
    assert.equal(end.head.hash, JSON.parse(lines.at(-2)!).hash)
    assert.equal(end.head.key_id, 'k1')
    assert.match(end.head.mac, /^[0-9a-f]{64}$/)

    const ok = await runWarrant(['audit', 'verify', '--file', exported, '--config', ws.configPath], ws.dir)
    assert.equal(ok.code, 0, ok.stdout + ok.stderr)
    assert.match(ok.stdout, /intact: 6 rows, last seq 6/)
    assert.match(ok.stdout, /guarantee: signed \(key k1\)/)
  })

  test('without the key a signed export is unverifiable, saying where the key comes from', async () => {
    const r = await runWarrant(['audit', 'verify', '--file', exported], ws.dir)
    assert.equal(r.code, 3, r.stdout + r.stderr)
    assert.match(r.stdout, /BROKEN at seq 1 \(unverifiable\)/)
    assert.match(r.stdout, /--config|WARRANT_AUDIT_KEY/)
  })

  test('a truncated file, an edited row, reordered rows, removed last rows, a moved head: each fails naming it', async () => {
    const text = (ls: string[]) => `${ls.join('\n')}\n`
    const cut = text(lines).slice(0, text(lines).length - Math.floor(lines.at(-1)!.length / 2) - 1)
    const cases: [string, string, RegExp][] = [
      ['cut.ndjson', cut, /truncated/],
      ['no-end.ndjson', text(lines.slice(0, -1)), /BROKEN .*\(removed\): .*end line/],
      ['edited.ndjson', text(lines.map((l, i) => (i === 1 ? l.replace('"plan_1"', '"plan_9"') : l))), /BROKEN at seq 2 \(altered\)/],
      ['swapped.ndjson', text([lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)]), /BROKEN at seq 2 \(reordered\): line 3/],
      ['short.ndjson', text([...lines.slice(0, 4), lines.at(-1)!]), /BROKEN at seq 5 \(removed\)/],
      [
        'moved-head.ndjson',
        text([...lines.slice(0, 4), JSON.stringify({ ...JSON.parse(lines.at(-1)!), rows: 4, head: { ...JSON.parse(lines.at(-1)!).head, seq: 4, hash: JSON.parse(lines[3]!).hash } })]),
        /BROKEN at seq 4 \(forged\)/,
      ],
      ['garbage-inside.ndjson', text([lines[0]!, 'not json', ...lines.slice(1)]), /BROKEN at seq 2 \(altered\): line 2/],
    ]
    for (const [name, body, expected] of cases) {
      const r = await verifyCopy(name, body)
      assert.equal(r.code, 3, `${name}: ${r.stdout}${r.stderr}`)
      assert.match(r.stdout, expected, name)
    }
  })

  test('a file that is not an export is your input: exit 2 naming it, nothing verified', async () => {
    mkdirSync(join(ws.dir, 'a-dir'), { recursive: true })
    const cases: [string, string | null, RegExp][] = [
      ['missing.ndjson', null, /cannot read .*missing\.ndjson/],
      ['empty.ndjson', '', /empty\.ndjson is empty/],
      ['yaml.ndjson', 'store: sqlite:./x.db\nresources: {}\n', /not a Warrant audit export: line 1 is not JSON/],
      ['object.ndjson', '{"hello":"world"}\n', /not a Warrant audit export: line 1 is neither an audit row nor the export's end line/],
      ['a-dir', null, /cannot read .*a-dir/],
    ]
    for (const [name, body, expected] of cases) {
      const file = join(ws.dir, name)
      if (body !== null) writeFileSync(file, body)
      const r = await runWarrant(['audit', 'verify', '--file', file, '--config', ws.configPath], ws.dir)
      assert.equal(r.code, 2, `${name}: ${r.stdout}${r.stderr}`)
      assert.match(r.stderr, expected, name)
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace')
    }
  })
})
