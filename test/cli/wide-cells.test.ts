import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

const WIDE_NAME = '株式会社北風ソフトウェア国際持株会社ベルリン支店'

/** Terminal columns of the text: the CJK characters of this test take two, the rest one. */
const columns = (text: string) => [...text].reduce((n, c) => n + (/[\u3000-\u9fff\uff00-\uff60]/.test(c) ? 2 : 1), 0)

/**
 * The terminal tables measured a cell in UTF-16 units, so a name in CJK characters (two columns each) took twice its
 * width: every cell after it on that row moved right, the status printed under "tenant" and the region under
 * "owner", a row read with values that are not its. A cell is measured and cut in terminal columns.
 */
describe('warrant search / select tables: a row of wide characters keeps its columns (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
    const db = new Database(join(ws.dir, 'demo.db'))
    db.prepare("update subscriptions set customer_name = ?, status = 'past_due' where id = 'sub_00001'").run(WIDE_NAME)
    db.prepare("update subscriptions set customer_name = '北風', status = 'active' where id = 'sub_00002'").run()
    db.close()
  })
  after(async () => {
    await ws?.drop()
  })

  for (const command of ['search', 'select']) {
    test(`warrant ${command}`, { timeout: 60_000 }, async () => {
      const r = await ws.warrant([command, 'subscriptions', '-f', 'id=sub_00001,sub_00002,sub_00003', ...(command === 'select' ? ['-q'] : [])])
      assert.equal(r.code, 0, r.stderr)
      const lines = r.stdout.split('\n')
      const header = lines.find((l) => /^\s*id\s+customer_name\s+status/.test(l))!
      const at = columns(header.slice(0, header.indexOf('status')))
      for (const id of ['sub_00001', 'sub_00002', 'sub_00003']) {
        const row = lines.find((l) => l.trim().startsWith(id))!
        const status = /\s(past_due|active|canceled|trialing)\s/.exec(row)!
        assert.equal(columns(row.slice(0, status.index + 1)), at, `${id}'s status sits under "status":\n${r.stdout}`)
      }
      const cut = lines.find((l) => l.trim().startsWith('sub_00001'))!
      assert.match(cut, /株式会社\S*…/, 'the wide name is cut, and marked')
    })
  }
})
