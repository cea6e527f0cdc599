import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sendJson, startUpstream } from '../connectors/http/upstream-server.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A selection over two sources that hold one id: the freeze refuses it (a member is (source, id), but the store's
 * members are unique by id, the digest binds ids and versions only, and reads by id key their answers by id), on
 * both stores, whatever the order the sources list their ids in. Upstream unlike the demo: `ref` ids, `rev`
 * versions, `?pg=N` pages under `data.rows`. The second source lists its ids below the first's (so the walk's ids
 * do not ascend, and the freeze looks the repeated id up among the rows already frozen).
 */
for (const kind of STORE_KINDS)
  describe(`a selection whose sources share an id (${kind} store)`, () => {
    test('is refused 409 naming the id and both sources; no selection is left behind', async () => {
      const rows = (refs: string[]) => refs.map((ref) => ({ ref, state: 'open', rev: 1 }))
      const page = (all: ReturnType<typeof rows>) => (req: { url: URL }, res: Parameters<Parameters<typeof startUpstream>[0]>[1]) => {
        if (req.url.pathname !== '/v2/entries') return sendJson(res, 404, { error: 'no entry' })
        const pg = Number(req.url.searchParams.get('pg') ?? 1)
        return sendJson(res, 200, { data: { rows: all.slice((pg - 1) * 2, pg * 2) } })
      }
      const north = await startUpstream(page(rows(['m-1', 'm-2', 'm-3'])))
      const south = await startUpstream(page(rows(['a-1', 'm-2'])))
      const fx = await startDemoGateway({
        store: kind,
        count: 5,
        serve: false,
        edit: (c) =>
          void (c.resources.entries = {
            environment: { name: 'registry-test', host: north.origin },
            id_field: 'ref',
            connector: {
              kind: 'http',
              sources: [
                { name: 'north', base_url: `${north.origin}/v2` },
                { name: 'south', base_url: `${south.origin}/v2` },
              ],
              list: { path: '/entries', items_path: 'data.rows', pagination: { style: 'page', param: 'pg' } },
              get: { path: '/entries/{id}' },
              version: { from: 'field', field: 'rev' },
            },
            fields: { ref: 'string', state: 'string', rev: 'integer' },
            review_fields: ['ref', 'state'],
            approval: {},
            actions: {},
          }),
      })
      try {
        const issued = await fx.gateway.principals.issue({ name: 'entries-agent', role: 'agent', scopes: { resources: ['entries'], actions: '*' } })
        const agent = await fx.gateway.principals.authenticate(issued.token, 'http')
        await assert.rejects(fx.gateway.selections.create(agent, 'entries', { filter: { state: 'open' } }), (error: Error & { code?: string; details?: any }) => {
          assert.equal(error.code, 'conflict', error.message)
          assert.match(error.message, /"m-2"/)
          assert.match(error.message, /"north".*"south"|"south".*"north"/)
          return true
        })
        const left = await fx.gateway.store.db.selectFrom('selection_members').select('record_id').execute()
        assert.deepEqual(left, [], 'members of a refused selection were left in the store')
      } finally {
        await fx.close()
        await north.close()
        await south.close()
      }
    })
  })
