import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startThingsToMove } from '../plans/support/odd-upstream.js'
import { csvRecords } from '../support/csv-rows.js'
import { serveGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * An export names the environment its members were read in, and says when the resource's connector has been pointed
 * elsewhere since the freeze (staging's base_url set to production's, the environment label left as it was): the
 * NDJSON's first line in `upstream_moved`, the CSV on every row in `selection_environment` and
 * `selection_upstream_moved`. Before, a CSV named no environment at all, and neither file said the members were no
 * longer where the resource now reads.
 */
for (const kind of STORE_KINDS) {
  describe(`an export says where its members were read, and that the resource moved since (${kind} store, an odd HTTP upstream)`, () => {
    let setup: Awaited<ReturnType<typeof startThingsToMove>>
    let selectionId: string
    before(async () => {
      setup = await startThingsToMove(kind)
      selectionId = (await setup.fx.gateway.selections.create(setup.agent, 'things', {})).selection_id
    })
    after(async () => {
      await setup?.close()
    })

    const exportOn = async (base: string, format: string) => {
      const res = await fetch(`${base}/v1/selections/${selectionId}/export?format=${format}`, { headers: { authorization: `Bearer ${setup.fx.tokens.admin}` } })
      assert.equal(res.status, 200)
      return res.text()
    }

    test('where it was frozen: the environment named, nothing moved; after the move: both files say it', async () => {
      const environment = (await setup.fx.gateway.selections.view(setup.agent, selectionId)).environment
      assert.match(environment, /^things-<b>prod<\/b>/)
      const here = await serveGateway(setup.fx.gateway)
      try {
        const rows = csvRecords(await exportOn(here.base, 'csv'))
        assert.ok(rows.length > 0 && rows.every((r) => r.selection_environment === environment && r.selection_upstream_moved === ''), JSON.stringify(rows[0]))
        const head = JSON.parse((await exportOn(here.base, 'ndjson')).split('\n')[0]!)
        assert.deepEqual([head.environment, head.upstream_moved], [environment, null])
      } finally {
        await here.stop()
      }

      const moved = await serveGateway(await setup.move())
      try {
        const rows = csvRecords(await exportOn(moved.base, 'csv'))
        assert.ok(rows.every((r) => r.selection_environment === environment && /points elsewhere than when selection/.test(r.selection_upstream_moved!)), JSON.stringify(rows[0]))
        const head = JSON.parse((await exportOn(moved.base, 'ndjson')).split('\n')[0]!)
        assert.match(head.upstream_moved, /connector of resource "things" points elsewhere/)
      } finally {
        await moved.stop()
      }
    })
  })
}
