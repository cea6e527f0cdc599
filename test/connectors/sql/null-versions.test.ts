import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { checkResource } from '../../../src/checks/index.js'
import { createSqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine, type Kind } from './support/engine.js'
import { pausableResource } from './support/upstream.js'

/**
 * A row whose version column is NULL or '' has no version a write could be made conditional on. The connector
 * read NULL as the text "null" (one a row holding the text 'null' also has) and '' as a version: a selection
 * froze them and said complete, and the conditional UPDATE `WHERE version = ?` never matches a NULL, so the
 * commit answered "no longer meets the action's precondition" or "not a valid integer version" for a record
 * nobody changed. Such rows are counted (versionless, the walk not complete, naming the column and the fix),
 * fail a read by id saying why, and a write to one is refused saying it has no version.
 */
const TEXT = { id: 'string', status: 'string', version: 'string' } as const
const NUMBERED = { id: 'string', status: 'string', version: 'integer' }
const VERSIONLESS = /3 record\(s\) of source "things-db" carry no version \(version field "version" null or empty\).*not in the result.*give those records a version/

for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[]) {
  describe(`sql: rows whose version is NULL or empty (${kind})`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec('create table texts (id varchar(20) primary key, status varchar(20), version varchar(40))')
      await engine.exec("insert into texts values ('a', 'active', 'v1'), ('b', 'active', null), ('c', 'active', ''), ('d', 'active', 'null'), ('e', 'past_due', null)")
      await engine.exec('create table numbered (id varchar(20) primary key, status varchar(20), version integer)')
      await engine.exec("insert into numbered values ('a', 'active', 1), ('b', 'active', null)")
    })
    after(() => engine?.drop())

    for (const pageSize of [1, 2, 100])
      it(`pages of ${pageSize}: a NULL or '' version is counted versionless, never returned; the text 'null' is a version`, async () => {
        const envelope = await search(engine.connector('texts', TEXT), {}, pageSize)
        assert.deepEqual(envelope.items.map((i) => [i.id, i.version]), [['a', 'v1'], ['d', 'null']])
        assert.equal(envelope.complete, false)
        const shape = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
        assert.ok(shape, JSON.stringify(envelope.incomplete_reasons))
        assert.match(shape.message, VERSIONLESS)
        assert.doesNotMatch(shape.message, /another type|declared field/)
        assert.deepEqual([shape.fields, shape.record_count], [['version'], 3])
      })

    it('only the versionless rows a filter matches are counted: none matched, the answer is complete', async () => {
      const some = await search(engine.connector('texts', TEXT), { status: 'past_due' }, 2)
      assert.deepEqual([some.items.length, some.complete], [0, false])
      assert.equal(some.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')?.record_count, 1)
      const none = await search(engine.connector('texts', TEXT), { id: { in: ['a', 'd'] } }, 1)
      assert.equal(none.complete, true, JSON.stringify(none.incomplete_reasons))
      assert.deepEqual(none.items.map((i) => i.id), ['a', 'd'])
    })

    it('an integer version column holding NULL: counted, never read as version "null"', async () => {
      const envelope = await search(engine.connector('numbered', NUMBERED), {}, 1)
      assert.deepEqual(envelope.items.map((i) => [i.id, i.version]), [['a', '1']])
      assert.equal(envelope.complete, false)
      assert.equal(envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')?.record_count, 1)
    })

    it('a read by id fails for a row without a version, naming the column and the fix', async () => {
      const read = await engine.connector('texts', TEXT).readByIds(['a', 'b', 'c', 'd', 'zz'])
      assert.deepEqual([...read.records.keys()].sort(), ['a', 'd'])
      assert.deepEqual(read.missing, ['zz'])
      assert.deepEqual(read.failed.map((f) => f.id).sort(), ['b', 'c'])
      for (const f of read.failed) assert.match(f.message, /record "[bc]" has no version: its version column "version" is NULL or empty, so no change can be made conditional on it \(give the row a version/)
    })

    it("a write to a row without a version is refused saying so, never 'version_changed' or 'precondition_failed'; nothing is written", async () => {
      const texts = engine.connector('texts', TEXT)
      const numbered = engine.connector('numbered', NUMBERED)
      // "null" as frozen before NULLs were refused, "" as frozen from an empty version, "v1" as frozen before the row lost it
      const attempts = [
        { connector: texts, id: 'b', expectedVersion: 'null' },
        { connector: texts, id: 'b', expectedVersion: 'v1' },
        { connector: texts, id: 'c', expectedVersion: '' },
        { connector: numbered, id: 'b', expectedVersion: 'null' },
      ]
      for (const { connector, id, expectedVersion } of attempts) {
        const outcome = await connector.write({ id, expectedVersion, set: { status: 'paused' }, precondition: {} })
        assert.equal(outcome.kind, 'rejected', `${id} at ${JSON.stringify(expectedVersion)}: ${JSON.stringify(outcome)}`)
        assert.match((outcome as { message: string }).message, new RegExp(`record "${id}" has no version: its version column "version" is NULL or empty.*nothing was written`))
      }
      if (texts.writeWindow) {
        const outcomes = await texts.writeWindow(['b', 'c'].map((id) => ({ id, expectedVersion: id === 'c' ? '' : 'null', set: { status: 'paused' }, precondition: {} })))
        for (const outcome of outcomes) assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      }
      const rows = await engine.rows("select id, status from texts where id in ('b', 'c') union all select id, status from numbered where id = 'b'")
      assert.deepEqual(rows.map((r) => r.status), ['active', 'active', 'active'])
    })

    it("warrant check's versions line names the rows without a version and version_field", async () => {
      const config = pausableResource(engine.url, 'texts', 'things-db', TEXT)
      const connector = createSqlConnector({ resource: config })
      try {
        const versions = (await checkResource({ name: 'texts', config, connector })).guarantees.find((g) => g.name === 'versions')
        assert.equal(versions?.status, 'fails_closed', JSON.stringify(versions))
        assert.match(versions.detail, /3 of 5 records have no version \(their version field "version" is null or empty\)/)
        assert.deepEqual(versions.config_keys, ['version_field'])
      } finally {
        await connector.close()
      }
    })
  })
}
