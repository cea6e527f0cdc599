import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

const ORDINARY = Array.from({ length: 300 }, (_, i) => `user-${String(i).padStart(6, '0')}`)

/**
 * The plan page named record ids drawn alike ("admin-I" and "admin-l", the agent's "user-1O" for the target user-10);
 * `warrant select` and `warrant plan` printed them as any two ids, so an operator reading the terminal approved what
 * a reviewer on the page was warned of. They print the selection's and the plan's `lookalike_ids`, the one answer
 * every surface renders.
 */
describe('warrant select / plan: record ids drawn alike are named, with their code points (real process, odd http upstream)', () => {
  let upstream: OddUpstream
  let ws: CliWorkspace
  before(async () => {
    upstream = await startOddUpstream(['admin-I', 'admin-l', 'user-10', ...ORDINARY].map((id) => ({ id, name: `name of ${id}`, status: 'open', note: 'n' })))
    ws = await createCliWorkspace({ count: 5, edit: (raw) => void (raw.resources.things = thingsResourceConfig(upstream.origin)) })
  })
  after(async () => {
    await ws?.drop()
    await upstream?.close()
  })

  const selectionOf = (stdout: string) => /selection (sel_\S+) froze/.exec(stdout)?.[1]

  test('warrant select names each group and the code points where its ids differ', { timeout: 120_000 }, async () => {
    const run = await ws.warrant(['select', 'things', '-q', '--filter', 'id=admin-I,admin-l,user-10,user-000001'])
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const at = run.stdout.indexOf('LOOK-ALIKE IDS')
    assert.ok(at >= 0, run.stdout)
    const said = run.stdout.slice(at)
    assert.match(said, /admin-I \(U\+0049\) · admin-l \(U\+006C\)/, said)
    assert.doesNotMatch(said.split('\n\n')[0]!, /user-000001|user-10 /, said)
  })

  test("warrant plan names the groups and the agent's word drawn like a target's id", { timeout: 120_000 }, async () => {
    const selected = await ws.warrant(['select', 'things', '-q', '--filter', 'id=admin-I,admin-l,user-10'])
    const id = selectionOf(selected.stdout)
    assert.ok(id, selected.stdout)
    const run = await ws.warrant(['plan', id, '--action', 'set_status', '--param', 'status=archived as user-1O'])
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const at = run.stdout.indexOf('LOOK-ALIKE IDS')
    assert.ok(at >= 0, run.stdout)
    const said = run.stdout.slice(at)
    assert.match(said, /admin-I \(U\+0049\) · admin-l \(U\+006C\)/, said)
    assert.match(said, /"user-1O" \(U\+004F\) .*the record id user-10 \(U\+0030\)/, said)
  })

  test('ordinary ids print no such line', { timeout: 120_000 }, async () => {
    const selected = await ws.warrant(['select', 'things', '-q', '--filter', 'id>=user-0', '--filter', 'id<user-1'])
    assert.equal(selected.code, 0, `${selected.stdout}\n${selected.stderr}`)
    assert.match(selected.stdout, /froze 300 record/, selected.stdout)
    assert.doesNotMatch(selected.stdout, /LOOK-ALIKE/, selected.stdout)
    const planned = await ws.warrant(['plan', selectionOf(selected.stdout)!, '--action', 'set_status', '--param', 'status=user-000123 closed'])
    assert.equal(planned.code, 0, `${planned.stdout}\n${planned.stderr}`)
    assert.doesNotMatch(planned.stdout, /LOOK-ALIKE/, planned.stdout)
  })
})
