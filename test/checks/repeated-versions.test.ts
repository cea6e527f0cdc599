import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource, renderCheckReport, type CheckReport } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from '../connectors/sql/support/engine.js'

/**
 * A `string` version_field whose values repeat across the records read (150 records, 3 plans) is a business
 * field named version by mistake: every write sets it to a fresh UUID, overwriting the customer's plan, and a
 * change by another writer never moves it. `warrant check` must say so on the versions line, naming the field,
 * the distinct count against the records read and the fix, never "every guarantee holds". A real per-write
 * version (a UUID, an etag) is all distinct; integer and timestamp versions (counters legitimately start equal)
 * and text holding only counters or timestamps are not judged.
 */
const ROWS = 150

const versions = (report: CheckReport) => report.guarantees.find((g) => g.name === 'versions')

for (const kind of ['sqlite', 'postgres', 'mysql'] as const satisfies readonly Kind[]) {
  describe(`warrant check on ${kind}: the values of a string version field`, () => {
    let engine: Engine
    const connectors: SqlConnector[] = []
    before(async () => {
      engine = await createEngine(kind)
      // varchar(40): long enough for the UUID, so the column's length refuses nothing and only the values tell
      await engine.exec('create table accounts (id integer primary key, plan varchar(40) not null, etag varchar(40) not null, rev_text varchar(40) not null, rev integer not null, updated varchar(40) not null)')
      const plans = ['free', 'pro', 'team']
      const rows = Array.from({ length: ROWS }, (_, i) => `(${i + 1}, '${plans[i % 3]}', 'e-${(i * 7919).toString(36)}-${i}', '1', 1, '2024-06-01T12:00:00.000Z')`)
      await engine.exec(`insert into accounts values ${rows.join(', ')}`)
      await engine.exec('create table short_accounts (id integer primary key, plan varchar(20) not null, etag varchar(40) not null, rev_text varchar(40) not null, rev integer not null, updated varchar(40) not null)')
      await engine.exec(`insert into short_accounts values ${rows.join(', ')}`)
    })
    after(async () => {
      await Promise.all(connectors.map((c) => c.close()))
      await engine?.drop()
    })
    const check = (version: string, versionType: string, actions: boolean, table = 'accounts') => {
      const fields = { id: 'integer', plan: 'string', etag: 'string', rev_text: 'string', rev: 'integer', updated: 'string', [version]: versionType }
      const config = resourceSchema.parse({
        environment: { name: 'test' },
        connector: { kind: 'sql', url: engine.url, table, source: 'accounts-db' },
        fields,
        version_field: version,
        review_fields: ['id', 'plan'],
        actions: actions ? { rename: { set: { [version === 'plan' ? 'etag' : 'plan']: 'x' }, precondition: {} } } : {},
      })
      const connector = createSqlConnector({ resource: config })
      connectors.push(connector)
      return checkResource({ name: table, config, connector })
    }

    test('plan (3 values over 150 records) with an action: unsafe, naming the field, the counts and the fix', async () => {
      const report = await check('plan', 'string', true)
      const g = versions(report)
      assert.equal(g?.status, 'unsafe', JSON.stringify(g))
      assert.match(g?.detail ?? '', /version field "plan" holds 3 distinct values over the 150 records read/)
      assert.match(g?.detail ?? '', /a column that means nothing else and changes on every write: a counter, updated_at/)
      assert.deepEqual(g?.config_keys, ['version_field'])
      assert.equal(report.verdict, 'unsafe')
      assert.match(renderCheckReport(report), /versions +UNSAFE/)
    })

    test('plan over a varchar(20), whose writes its column refuses already: fails closed, still naming the field', async () => {
      if (kind === 'sqlite') return // SQLite keeps text of any length: no column refuses the UUID
      const g = versions(await check('plan', 'string', true, 'short_accounts'))
      assert.equal(g?.status, 'fails_closed', JSON.stringify(g))
      assert.match(g?.detail ?? '', /version field "plan" holds 3 distinct values over the 150 records read.*refuses every write already/)
    })

    test('plan with no action: a warning, nothing written yet', async () => {
      const g = versions(await check('plan', 'string', false))
      assert.equal(g?.status, 'warning', JSON.stringify(g))
      assert.match(g?.detail ?? '', /3 distinct values over the 150 records read/)
    })

    test('an etag column, every value its own: holds', async () => {
      const g = versions(await check('etag', 'string', true))
      assert.equal(g?.status, 'holds', JSON.stringify(g))
    })

    test('an integer counter and a string of counters or timestamps, all equal: not judged, holds', async () => {
      for (const [field, type] of [['rev', 'integer'], ['rev_text', 'string'], ['updated', 'string'], ['updated', 'timestamp']] as const) {
        if (kind !== 'sqlite' && type === 'timestamp') continue // a varchar declared timestamp is a field_types misfit on a server engine
        const g = versions(await check(field, type, false))
        assert.equal(g?.status, 'holds', `${field} ${type}: ${JSON.stringify(g)}`)
      }
    })
  })
}
