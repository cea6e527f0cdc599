import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { itemsResourceConfig, startItemsUpstream } from '../operations/support/things-actions.js'
import { createCliWorkspace, type CliWorkspace } from '../support/cli-config.js'

interface Reported {
  readonly guarantees: readonly { readonly name: string; readonly status: string; readonly detail: string; readonly config_keys: readonly string[] }[]
}

/**
 * An action is reversible by default, yet a compensation of a `DELETE`, or of an action endpoint whose body carries no
 * set field, is refused (409 delete_not_restorable, body_sets_no_field). `warrant check` said nothing of it: the
 * operator learned only when an undo was asked for after the bulk change. The check now warns per such action, in
 * the refusal's words, and says nothing of an action a compensation can restore or one declared irreversible.
 * The real `warrant check` subprocess over a loopback upstream whose writes are action endpoints.
 */
describe('warrant check warns of an action left reversible that no compensation can restore', () => {
  let up: Awaited<ReturnType<typeof startItemsUpstream>>
  let ws: CliWorkspace
  before(async () => {
    up = await startItemsUpstream(4)
    ws = await createCliWorkspace({ count: 20, edit: (raw) => void (raw.resources.items = itemsResourceConfig(up.origin)) })
  })
  after(async () => {
    await ws?.drop()
    await up?.close()
  })

  test('remove (DELETE) and close (POST, no set field) warned, in the refusal words; set_closed, patch_closed (PATCH), close_for_good and the sql resource not', async () => {
    const json = await ws.warrant(['check', 'items', '--json'])
    const report = JSON.parse(json.stdout) as Reported
    const compensations = report.guarantees.filter((g) => g.name.startsWith('compensation'))
    assert.deepEqual(
      compensations.map((g) => [g.name, g.status, g.config_keys]),
      [
        ['compensation.remove', 'warning', ['actions.remove.reversible', 'actions.remove.write']],
        ['compensation.close', 'warning', ['actions.close.reversible', 'actions.close.write']],
      ],
      json.stdout + json.stderr,
    )
    assert.match(compensations[0]!.detail, /^action "remove" cannot be compensated: its write is DELETE \/items\/\{id\}, and a compensation would send that DELETE again, which restores no removed record \(though the config declares it reversible\)/)
    assert.match(compensations[1]!.detail, /^action "close" cannot be compensated: its write is POST \/items\/\{id\}\/close, whose body carries no set field, and a compensation would send that same request again without the before-values/)
    for (const g of compensations) assert.match(g.detail, /reversible: false/)

    const text = await ws.warrant(['check', 'items'])
    assert.match(text.stdout, /compensation\.remove\s+WARNING\s+action "remove" cannot be compensated/, text.stdout)
    assert.match(text.stdout, /compensation\.close\s+WARNING/, text.stdout)
    assert.doesNotMatch(text.stdout, /compensation\.(set_closed|patch_closed|close_for_good)/, text.stdout)

    const sql = JSON.parse((await ws.warrant(['check', 'subscriptions', '--json'])).stdout) as Reported
    assert.deepEqual(sql.guarantees.filter((g) => g.name.startsWith('compensation')), [], 'the demo actions patch columns: nothing to warn of')
  })
})
