import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * An option that takes one value, given twice with two values, was read as the last without a word:
 * `warrant plan SEL -a pause_collection -a resume_collection` proposed resume_collection, `--digest A --digest B`
 * approved on B. As a JSON key named twice on HTTP, it is refused, exit 2 `invalid_request` naming the option (not
 * its values: one may be a token); nothing is proposed. The same value twice is one request; repeatable options (`-f`, `-p`) stay so.
 */
describe('the CLI refuses a one-value option given twice with different values (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let selectionId: string
  before(async () => {
    ws = await createCliWorkspace({ count: 200 })
    const selected = await ws.warrant(['select', 'subscriptions', '-f', 'status=paused', '--json', '-q'])
    assert.equal(selected.code, 0, selected.stderr)
    selectionId = JSON.parse(selected.stdout).selection_id
  })
  after(async () => {
    await ws?.drop()
  })

  test('plan -a X -a Y exits 2 naming --action and both values; no plan is proposed', async () => {
    const r = await ws.warrant(['plan', selectionId, '-a', 'pause_collection', '--action=resume_collection', '--json'])
    assert.equal(r.code, 2, r.stdout)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, /invalid_request: option --action is given twice with different values; give it once/)
    const plans = await ws.withStore((store) => store.db.selectFrom('plans').select('id').execute())
    assert.deepEqual(plans, [])
  })

  test('the same value twice is taken; -f stays repeatable', async () => {
    const r = await ws.warrant(['plan', selectionId, '-a', 'resume_collection', '-a', 'resume_collection', '--json'])
    assert.equal(r.code, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout).action.type, 'resume_collection')
    const s = await ws.warrant(['search', 'subscriptions', '-f', 'status=paused', '-f', 'region=eu', '--json'])
    assert.equal(s.code, 0, s.stderr)
  })

  test('search --max-pages 2 --max-pages 3 exits 2 naming it', async () => {
    const r = await ws.warrant(['search', 'subscriptions', '-f', 'status=paused', '--max-pages', '2', '--max-pages', '3'])
    assert.equal(r.code, 2, r.stdout)
    assert.match(r.stderr, /option --max-pages is given twice with different values/)
    // a token's value is never repeated back
    const t = await ws.warrant(['plan', selectionId, '-a', 'resume_collection', '--token', 'wrt_secret_one', '--token', 'wrt_secret_two'])
    assert.equal(t.code, 2, t.stdout)
    assert.match(t.stderr, /option --token is given twice/)
    assert.ok(!t.stderr.includes('wrt_secret'))
  })
})
