import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'

/** A Node stack frame, as an uncaught error prints it. */
const STACK_FRAME = /^\s+at .+[(:]\d+/m

/**
 * `warrant audit export -o FILE` to a file that cannot be opened (a missing folder, a directory) died of an
 * unhandled 'error' event (a stack trace, exit 1, and no audit row for the command); `warrant audit checkpoint -o
 * FILE` said "internal error … a bug in Warrant" after it had already appended its checkpoint row and signed a
 * checkpoint nobody received.
 */
describe('warrant audit export / checkpoint -o a file that cannot be written (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 5 })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const target of ['missing-folder/audit.ndjson', '.']) {
    test(`export -o ${target}: exit 2 naming the file, no stack trace, the refusal recorded`, async () => {
      const file = join(ws.dir, target)
      const r = await ws.warrant(['audit', 'export', '-o', file])
      assert.equal(r.code, 2, r.stdout + r.stderr)
      assert.match(r.stderr, new RegExp(`invalid_request: cannot write the export to ${file.replaceAll('.', '\\.')}`))
      assert.doesNotMatch(r.stderr, STACK_FRAME)
      const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
      try {
        const last = await store.db.selectFrom('audit_events').select(['action', 'summary']).orderBy('seq', 'desc').executeTakeFirstOrThrow()
        assert.equal(last.action, 'cli:audit export')
        assert.equal((JSON.parse(last.summary) as { outcome: string }).outcome, 'refused')
      } finally {
        await store.close()
      }
    })
  }

  test('checkpoint -o a missing folder: exit 2 naming the file, and no checkpoint is signed', async () => {
    const file = join(ws.dir, 'missing-folder', 'checkpoint.json')
    const r = await ws.warrant(['audit', 'checkpoint', '-o', file])
    assert.equal(r.code, 2, r.stdout + r.stderr)
    assert.match(r.stderr, /invalid_request: cannot write the checkpoint to .*missing-folder\/checkpoint\.json/)
    assert.doesNotMatch(r.stderr, /internal error|a bug in Warrant/)
    assert.equal(existsSync(file), false)
    const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
    try {
      const signed = await store.db.selectFrom('audit_events').select('seq').where('action', '=', 'audit checkpoint').execute()
      assert.deepEqual(signed, [], 'no checkpoint row for a checkpoint that was never written')
    } finally {
      await store.close()
    }
  })
})
