import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace, type CliWorkspace } from '../support/cli-config.js'

/** Terminal columns of the text: the CJK characters of this test take two, the rest one. */
const columns = (text: string) => [...text].reduce((n, c) => n + (/[\u3000-\u9fff\uff00-\uff60]/.test(c) ? 2 : 1), 0)

/**
 * `warrant principal list` padded a principal's name in UTF-16 units, so a name in CJK characters (two terminal
 * columns each) pushed the rest of its row right: its role and id printed past the other rows'. The name is padded in
 * terminal columns, as the record tables measure their cells.
 */
describe('warrant principal list: a wide name keeps the columns after it (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 5 })
    for (const name of ['山田太郎', 'al']) {
      const created = await ws.warrant(['token', 'create', '--role', 'agent', '--name', name])
      assert.equal(created.code, 0, created.stderr)
    }
  })
  after(async () => {
    await ws?.drop()
  })

  test('principal list: the role starts at one column on every row', async () => {
    const r = await ws.warrant(['principal', 'list'])
    assert.equal(r.code, 0, r.stderr)
    const rows = r.stdout.split('\n').filter((l) => /\bagent\b/.test(l))
    assert.equal(rows.length, 2, r.stdout)
    const at = rows.map((l) => columns(l.slice(0, l.indexOf('agent'))))
    assert.equal(at[0], at[1], `the roles sit in one column:\n${r.stdout}`)
  })

})
