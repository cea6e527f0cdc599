import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createAuditLog, parseAuditKeys, verifyAuditExport } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'

const keyring = parseAuditKeys(`k1 ${'a1'.repeat(32)}`, 'test')
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }

async function* each(lines: readonly string[]): AsyncIterable<string> {
  yield* lines
}

/**
 * `warrant audit verify --file` checked what each line parses to, not the line: a row given a key twice
 * (`{"plan_id":"plan_FORGED","seq":2,…,"plan_id":"plan_1",…}`) parses, last member winning, to the row exported, so the
 * edited file verified intact while a reader keeping the first member (or a person searching the file) reads
 * plan_FORGED in a file Warrant had just called intact. A line must be exactly as the export writes it.
 */
for (const kind of STORE_KINDS) {
  describe(`an export whose lines were edited without changing what they parse to (${kind})`, () => {
    let ts: TestStore
    let lines: string[]
    before(async () => {
      ts = await createTestStore(kind)
      const audit = createAuditLog({ store: ts.store, keyring, log: { error: () => undefined } })
      for (let i = 0; i < 4; i++) await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i, note: 'é ✓' } })
      lines = []
      for await (const line of audit.exportNdjson()) lines.push(line.slice(0, -1))
    })
    after(() => ts?.drop())

    const verify = (edited: string[]) => verifyAuditExport(each(edited), 'audit.ndjson', { keyring })
    const editLine = (index: number, edit: (line: string) => string) => lines.map((line, i) => (i === index ? edit(line) : line))

    test('the export as written verifies intact', async () => {
      const { result } = await verify(lines)
      assert.equal(result.status, 'ok', JSON.stringify(result))
    })

    const edits: [string, number | 'end', (line: string) => string][] = [
      ['a member given twice, the forged value first', 1, (l) => l.replace('{"seq"', '{"plan_id":"plan_FORGED","seq"')],
      ['members reordered', 1, (l) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(l) as object).reverse()))],
      ['spaces between members', 1, (l) => JSON.stringify(JSON.parse(l), null, 1).replaceAll('\n', '')],
      ['a character escaped otherwise', 1, (l) => l.replace('"plan_1"', '"\\u0070lan_1"')],
      ["the end line's member given twice", 'end', (l) => l.replace('{"format"', '{"rows":99,"format"')],
    ]
    for (const [name, at, edit] of edits)
      test(`${name}: broken, altered, naming the line`, async () => {
        const index = at === 'end' ? lines.length - 1 : at
        const edited = editLine(index, edit)
        assert.notEqual(edited[index], lines[index])
        const { result, bad_line } = await verify(edited)
        assert.equal(result.status, 'broken', `${name}: ${JSON.stringify(result)}`)
        assert.equal(result.status === 'broken' && result.problem, 'altered')
        assert.equal(result.status === 'broken' && result.first_bad_seq, at === 'end' ? lines.length : 2)
        assert.match(result.status === 'broken' ? result.message : '', new RegExp(`line ${index + 1} of audit\\.ndjson is not exactly as the export wrote it`))
        assert.equal(bad_line, edited[index])
      })
  })
}
