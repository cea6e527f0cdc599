import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createLogger, openGateway } from '../../src/gateway/index.js'
import { readVersionProof, recordVersionProof, versionProofDigest } from '../../src/operations/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * The start-up sweep of write probes read the first 1,000 `version_proof:` rows by key and removed the stale ones
 * among them: with 1,000 proofs that still vouch keyed first, a stale one after them was never looked at, on any
 * start. A start now walks every proof row, a page at a time.
 */

const VALID = 1001
const actionName = (i: number) => `a${String(i).padStart(4, '0')}`

for (const kind of STORE_KINDS) {
  describe(`a gateway start looks at every kept write probe (${kind} store)`, () => {
    test(`${VALID} proofs that still vouch, keyed before one of an action no longer declared: the stale one goes, the others stay`, async () => {
      const fx = await startDemoGateway({
        store: kind,
        count: 5,
        serve: false,
        // as many declared actions as proofs that vouch: each proof is of its own action
        edit: (raw) => {
          const template = raw.resources.subscriptions.actions.resume_collection
          for (let i = 0; i < VALID; i++) raw.resources.subscriptions.actions[actionName(i)] = structuredClone(template)
        },
      })
      try {
        const db = fx.gateway.store.db
        const resource = fx.gateway.catalogue.get('subscriptions')
        const source = resource.connector.sources[0]!
        const proofOf = (action: string) => ({
          resource: 'subscriptions',
          action,
          digest: versionProofDigest(resource.config.connector, resource.config.actions[action] ?? {}),
          source,
          status: 'holds' as const,
          record_id: '1',
          probed_at: new Date().toISOString(),
          detail: 'seeded',
        })
        for (let i = 0; i < VALID; i++) await recordVersionProof(db, proofOf(actionName(i)))
        // 'zz_retired' sorts after every 'aNNNN' in either store's ordering of keys
        await recordVersionProof(db, proofOf('zz_retired'))
        const keys = await db.selectFrom('kv').select('key').where('key', 'like', 'version_proof:%').orderBy('key').execute()
        assert.equal(keys.length, VALID + 1)
        assert.match(keys.at(-1)!.key, /zz_retired/, 'the stale proof is keyed after the ones that vouch')

        const reopened = await openGateway({ config: fx.config, executors: false, log: createLogger({ level: 'silent' }) })
        await reopened.close()

        assert.equal(await readVersionProof(db, 'subscriptions', 'zz_retired', source), null, 'the proof of an action no longer declared was kept')
        for (const i of [0, 500, 999, 1000]) assert.notEqual(await readVersionProof(db, 'subscriptions', actionName(i), source), null, `${actionName(i)}'s proof went`)
        assert.equal((await db.selectFrom('kv').select('key').where('key', 'like', 'version_proof:%').execute()).length, VALID)
      } finally {
        await fx.close()
      }
    })
  })
}
