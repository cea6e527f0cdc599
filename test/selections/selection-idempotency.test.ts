import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { insertForeignBuildingSelection } from '../support/building-selection.js'
import { postWithKeys } from '../support/post-with-keys.js'
import { STORE_KINDS } from '../support/stores.js'

const PATH = '/v1/resources/subscriptions/selections'
const BODY = { filter: { status: 'past_due', region: 'us' }, exclude: [{ rule: 'disputed', filter: { tags: { contains: 'disputed' } } }] }

/**
 * `POST …/selections` takes an optional Idempotency-Key, as a commit does: an agent whose call timed out retries
 * with the same key and gets the selection its first call froze, not a second walk and a second selection. Before,
 * the header was ignored: every retry walked the upstream again and froze another selection.
 * The upstream is a PostgreSQL table, so a test can hold a walk (an exclusive lock on the table) at a known point.
 */
for (const kind of STORE_KINDS) {
  describe(`a selection request's Idempotency-Key (${kind} store)`, () => {
    let fx: GatewayFixture
    let upstream: pg.Client
    let otherAgent: string
    const post = (body: unknown, key?: string, token?: string) =>
      fx.as('agent')('POST', PATH, body, { ...(key === undefined ? {} : { 'idempotency-key': key }), ...(token ? { authorization: `Bearer ${token}` } : {}) })
    const selectionCount = async () => Number((await fx.gateway.store.db.selectFrom('selections').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
    const keyed = (key: string) => fx.gateway.store.db.selectFrom('selections').select(['id', 'state']).where('idempotency_key', 'like', `%\u001f${key}`).execute()
    /** Holds every read of the upstream table until `release` (the lock's transaction ends). */
    const lockUpstream = async () => {
      const holder = new pg.Client(fx.upstreamUrl)
      await holder.connect()
      await holder.query('begin')
      await holder.query('lock table subscriptions in access exclusive mode')
      return async () => {
        await holder.query('rollback')
        await holder.end()
      }
    }
    const building = async () => {
      for (let i = 0; i < 200; i++) {
        const row = await fx.gateway.store.db.selectFrom('selections').select('id').where('state', '=', 'building').executeTakeFirst()
        if (row) return row.id
        await new Promise((r) => setTimeout(r, 25))
      }
      throw new Error('no selection started building')
    }

    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 600, upstream: 'postgres' })
      upstream = new pg.Client(fx.upstreamUrl)
      await upstream.connect()
      otherAgent = (await fx.gateway.principals.issue({ name: 'other-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: '*' } })).token
    })
    after(async () => {
      await upstream?.end()
      await fx?.close()
    })

    test('the same key and request: the same selection, 200 created false, nothing walked again', async () => {
      const first = await post(BODY, 'sel-key-1')
      assert.equal(first.status, 201, JSON.stringify(first.body))
      assert.equal(first.body.created, true)
      assert.equal(first.body.complete, true)
      const count = await selectionCount()
      // the upstream table locked: a walk would wait on it, so an answer now was not walked
      const release = await lockUpstream()
      try {
        // the same request in another spelling: keys reordered, defaults given explicitly
        const respelled = { exclude: BODY.exclude, page_size: 1000, budget: {}, filter: { region: 'us', status: 'past_due' } }
        for (const body of [BODY, respelled]) {
          const again = await post(body, 'sel-key-1')
          assert.equal(again.status, 200, JSON.stringify(again.body))
          assert.equal(again.body.created, false)
          assert.equal(again.body.selection_id, first.body.selection_id)
          assert.equal(again.body.digest, first.body.digest)
        }
      } finally {
        await release()
      }
      assert.equal(await selectionCount(), count, 'no second selection')
      const trail = await fx.gateway.store.db.selectFrom('audit_events').select(['summary', 'selection_id']).where('action', '=', `POST /v1/resources/:resource/selections`).orderBy('seq').execute()
      assert.deepEqual(trail.slice(-3).map((r) => [JSON.parse(r.summary).status, r.selection_id]), [[201, first.body.selection_id], [200, first.body.selection_id], [200, first.body.selection_id]], 'the replays are recorded as such')
      // without a key, the same request is a new selection
      const unkeyed = await post(BODY)
      assert.equal(unkeyed.status, 201)
      assert.notEqual(unkeyed.body.selection_id, first.body.selection_id)
    })

    test('the OpenAPI document (derived from the zod schemas) names the header, the replay answer and its codes', async () => {
      const doc = (await fx.as('agent')('GET', '/openapi.json')).body
      const op = doc.paths['/v1/resources/{resource}/selections'].post
      const header = op.parameters.find((p: any) => p.in === 'header' && p.name === 'idempotency-key')
      assert.ok(header, JSON.stringify(op.parameters))
      assert.equal(header.required ?? false, false)
      assert.match(header.description, /idempotency_key_reused/)
      for (const status of ['200', '201', '409', '422']) assert.ok(op.responses[status], status)
      assert.match(JSON.stringify(doc.components.schemas.CreatedSelection.properties.created), /nothing was walked again/)
    })

    test('the same key with another request: 422 naming the key, nothing changed', async () => {
      const first = await post(BODY, 'sel-key-2')
      assert.equal(first.status, 201)
      const count = await selectionCount()
      for (const body of [{ ...BODY, filter: { status: 'past_due', region: 'eu' } }, { ...BODY, exclude: [] }, { ...BODY, budget: { max_pages: 1 } }, { ...BODY, fields: ['id', 'status'] }]) {
        const refused = await post(body, 'sel-key-2')
        assert.equal(refused.status, 422, JSON.stringify(refused.body))
        assert.equal(refused.body.error.code, 'idempotency_key_reused')
        assert.match(refused.body.error.message, /"sel-key-2"/)
        assert.equal(refused.body.error.details.idempotency_key, 'sel-key-2')
      }
      assert.equal(await selectionCount(), count)
      assert.equal((await post(BODY, 'sel-key-2')).body.selection_id, first.body.selection_id, 'the key still names its selection')
    })

    test("another principal's equal key is another key: its own selection, the first never revealed", async () => {
      const mine = await post(BODY, 'sel-key-shared')
      assert.equal(mine.status, 201)
      const theirs = await post(BODY, 'sel-key-shared', otherAgent)
      assert.equal(theirs.status, 201, JSON.stringify(theirs.body))
      assert.equal(theirs.body.created, true)
      assert.notEqual(theirs.body.selection_id, mine.body.selection_id)
      assert.ok(!JSON.stringify(theirs.body).includes(mine.body.selection_id))
      // and with another request under that key: their own key, so no 422 naming mine either
      const other = await post({ filter: { status: 'active' } }, 'sel-key-shared-2', otherAgent)
      assert.equal(other.status, 201)
      const refused = await post(BODY, 'sel-key-shared-2')
      assert.equal(refused.status, 201, 'the first principal never used that key')
    })

    test('bad keys: 400 naming Idempotency-Key, nothing created', async () => {
      const count = await selectionCount()
      for (const keys of [['x'.repeat(256)], [''], ['   '], ['a\tb'], ['k1', 'k2']]) {
        const refused = await postWithKeys(fx, PATH, BODY, keys)
        assert.equal(refused.status, 400, `${JSON.stringify(keys)}: ${JSON.stringify(refused.body)}`)
        assert.equal(refused.body.error.code, 'invalid_request')
        assert.match(refused.body.error.message, /Idempotency-Key/)
      }
      assert.equal(await selectionCount(), count)
      assert.equal((await postWithKeys(fx, PATH, BODY, ['y'.repeat(255)])).status, 201, '255 characters is a key')
    })

    test('while the first request with a key walks: the same key is 409 in progress, another request 422; then the one selection', async () => {
      const release = await lockUpstream()
      let first: Promise<Awaited<ReturnType<typeof post>>>
      try {
        first = post(BODY, 'sel-key-3')
        const id = await building()
        const busy = await post(BODY, 'sel-key-3')
        assert.equal(busy.status, 409, JSON.stringify(busy.body))
        assert.equal(busy.body.error.code, 'idempotency_in_progress')
        assert.equal(busy.body.error.details.selection_id, id)
        assert.match(busy.body.error.message, /"sel-key-3"/)
        const other = await post({ filter: { status: 'active' } }, 'sel-key-3')
        assert.equal(other.status, 422, JSON.stringify(other.body))
      } finally {
        await release()
      }
      const made = await first
      assert.equal(made.status, 201, JSON.stringify(made.body))
      const replay = await post(BODY, 'sel-key-3')
      assert.equal(replay.status, 200)
      assert.equal(replay.body.selection_id, made.body.selection_id)
      assert.deepEqual(await keyed('sel-key-3'), [{ id: made.body.selection_id, state: 'frozen' }])
    })

    test('eight requests at once with one key: one selection', async () => {
      const count = await selectionCount()
      const answers = await Promise.all(Array.from({ length: 8 }, () => post({ ...BODY, page_size: 20 }, 'sel-key-4')))
      const made = answers.filter((a) => a.status === 201)
      assert.equal(made.length, 1, JSON.stringify(answers.map((a) => [a.status, a.body.error?.code])))
      for (const a of answers) {
        if (a.status === 409) assert.equal(a.body.error.code, 'idempotency_in_progress')
        else {
          assert.ok(a.status === 201 || a.status === 200, JSON.stringify(a.body))
          assert.equal(a.body.selection_id, made[0]!.body.selection_id)
        }
      }
      assert.equal(await selectionCount(), count + 1)
      assert.deepEqual(await keyed('sel-key-4'), [{ id: made[0]!.body.selection_id, state: 'frozen' }])
    })

    test('a walk the upstream cut short is an answer the key names (to walk again, a new key)', async () => {
      await upstream.query('alter table subscriptions rename to subscriptions_away')
      let partial: Awaited<ReturnType<typeof post>>
      try {
        partial = await post(BODY, 'sel-key-5')
      } finally {
        await upstream.query('alter table subscriptions_away rename to subscriptions')
      }
      assert.equal(partial.status, 201, JSON.stringify(partial.body))
      assert.equal(partial.body.complete, false)
      const replay = await post(BODY, 'sel-key-5')
      assert.equal(replay.status, 200)
      assert.equal(replay.body.selection_id, partial.body.selection_id)
      assert.equal(replay.body.complete, false)
      const fresh = await post(BODY, 'sel-key-5b')
      assert.equal(fresh.status, 201)
      assert.equal(fresh.body.complete, true)
    })

    test('a first request that failed left the key free: stopped mid-walk, or its builder died', async () => {
      const agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'cli')
      const stop = new AbortController()
      await assert.rejects(
        fx.gateway.selections.create(agent, 'subscriptions', { ...BODY, page_size: 10 }, { idempotencyKey: 'sel-key-6', signal: stop.signal, onProgress: (p) => p.pages === 1 && stop.abort(new Error('stopped')) }),
        /stopped/,
      )
      assert.deepEqual(await keyed('sel-key-6'), [], 'nothing of the stopped walk holds the key')
      const retried = await post({ ...BODY, page_size: 10 }, 'sel-key-6')
      assert.equal(retried.status, 201, JSON.stringify(retried.body))
      assert.equal(retried.body.created, true)

      // a building row whose builder is gone (its lease ended) holds the key: reaped, and this request walks
      const holder = await fx.gateway.store.db.selectFrom('selections').select(['idempotency_key', 'request_fingerprint', 'created_by']).where('id', '=', retried.body.selection_id).executeTakeFirstOrThrow()
      await insertForeignBuildingSelection(fx.gateway.store, 'sel_dead_builder', { createdBy: holder.created_by, origin: null, builder: 'gone-host:1:dead:m', leaseUntil: new Date(Date.now() - 60_000).toISOString() })
      await fx.gateway.store.db.updateTable('selections').set({ idempotency_key: holder.idempotency_key!.replace(/sel-key-6$/, 'sel-key-7'), request_fingerprint: holder.request_fingerprint }).where('id', '=', 'sel_dead_builder').execute()
      const after = await post({ ...BODY, page_size: 10 }, 'sel-key-7')
      assert.equal(after.status, 201, JSON.stringify(after.body))
      assert.equal(after.body.created, true)
      const dead = await fx.gateway.store.db.selectFrom('selections').select(['state', 'idempotency_key']).where('id', '=', 'sel_dead_builder').executeTakeFirstOrThrow()
      assert.deepEqual(dead, { state: 'failed', idempotency_key: null })
      assert.deepEqual(await keyed('sel-key-7'), [{ id: after.body.selection_id, state: 'frozen' }])
    })
  })
}
