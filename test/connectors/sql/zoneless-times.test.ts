import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A PostgreSQL `timestamp` (without time zone) or `date` names no instant; a sql upstream's such value is read as
 * UTC (README: SQLite's `2024-06-01 13:00:00` is UTC; MySQL's DATETIME is read in UTC), and the SQL compares a
 * filter's instant with it as UTC (the ISO parameter's zone is dropped). pg read both in the gateway process's own
 * time zone: under TZ=Europe/Berlin a row holding 12:00 was shown as 10:00Z, while `ts < 11:00Z` in SQL left it out,
 * complete. MariaDB's DATETIME and DATE, read in UTC already, are the reference.
 */
const ZONELESS = { postgres: ['timestamp(3)', 'date'], mysql: ['datetime(3)', 'date'] } as const
const FIELDS = { id: 'string', version: 'integer', ts: 'timestamp', d: 'timestamp' }

for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: times without a zone are UTC, whatever the gateway's own time zone`, () => {
    let engine: Engine
    const zone = process.env.TZ
    before(async () => {
      process.env.TZ = 'Europe/Berlin'
      engine = await createEngine(kind)
      const [ts, d] = ZONELESS[kind]
      await engine.exec(`create table t (id varchar(10) primary key, version integer not null, ts ${ts}, d ${d})`)
      await engine.exec("insert into t values ('a', 1, '2024-06-01 12:00:00', '2024-06-01'), ('b', 1, '2024-06-02 12:00:00.250', '2024-06-02')")
    })
    after(async () => {
      if (zone === undefined) delete process.env.TZ
      else process.env.TZ = zone
      await engine?.drop()
    })

    it('a record shows the stored wall-clock time as that time in UTC, a date as its midnight in UTC', async () => {
      const all = await search(engine.connector('t', FIELDS), {}, 1)
      assert.deepEqual(
        all.items.map((i) => [i.id, i.fields.ts, i.fields.d]),
        [
          ['a', '2024-06-01T12:00:00.000Z', '2024-06-01T00:00:00.000Z'],
          ['b', '2024-06-02T12:00:00.250Z', '2024-06-02T00:00:00.000Z'],
        ],
      )
      const read = await engine.connector('t', FIELDS).readByIds(['a'])
      assert.equal(read.records.get('a')?.fields.ts, '2024-06-01T12:00:00.000Z')
    })

    it('a filter answers the records whose shown time meets it', async () => {
      const ids = async (filter: object) => (await search(engine.connector('t', FIELDS), filter as never, 1)).items.map((i) => i.id)
      assert.deepEqual(await ids({ ts: { lt: '2024-06-01T11:00:00Z' } }), [])
      assert.deepEqual(await ids({ ts: { gte: '2024-06-01T12:00:00Z' } }), ['a', 'b'])
      assert.deepEqual(await ids({ ts: { eq: '2024-06-02T12:00:00.250Z' } }), ['b'])
    })
  })
}

/**
 * A `date` column under a timestamp field is shown as its midnight in UTC, and a filter or precondition compares
 * that instant. PostgreSQL read the filter's instant as a date (its time dropped): `d < 2024-06-01T12:00Z` left out
 * the row shown as 2024-06-01T00:00Z, `d = 2024-06-01T12:00Z` found it, each answer complete, and a precondition
 * `d >= 12:00Z` held on it. MariaDB compares a DATE with a date-time as a date-time already.
 */
for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: a date column under a timestamp field compares as its midnight`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec('create table days (id varchar(10) primary key, version integer not null, d date)')
      await engine.exec("insert into days values ('a', 1, '2024-06-01'), ('b', 1, '2024-06-02'), ('n', 1, null)")
    })
    after(() => engine?.drop())

    const NOON = '2024-06-01T12:00:00Z'
    const cases: [object, string[]][] = [
      [{ d: { lt: NOON } }, ['a']],
      [{ d: { lte: NOON } }, ['a']],
      [{ d: { gt: NOON } }, ['b']],
      [{ d: { gte: NOON } }, ['b']],
      [{ d: { eq: NOON } }, []],
      [{ d: { in: [NOON] } }, []],
      [{ d: { not_in: [NOON] } }, ['a', 'b']],
      [{ d: { eq: '2024-06-01' } }, ['a']],
      [{ d: { lte: '2024-06-01T00:00:00Z' } }, ['a']],
      [{ d: { gt: '2024-06-01T00:00:00Z' } }, ['b']],
    ]
    for (const [filter, expected] of cases)
      it(`${JSON.stringify(filter)} answers ${JSON.stringify(expected)}, complete`, async () => {
        const envelope = await search(engine.connector('days', { id: 'string', version: 'integer', d: 'timestamp' }), filter as never, 1)
        assert.deepEqual(envelope.items.map((i) => i.id), expected)
        assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
      })

    it('a precondition on it holds as the record shows it: none written where it does not', async () => {
      const connector = engine.connector('days', { id: 'string', version: 'integer', d: 'timestamp', status: 'string' })
      await engine.exec('alter table days add column status varchar(10)')
      const refused = await connector.write({ id: 'a', expectedVersion: '1', set: { status: 'late' }, precondition: { d: { gte: NOON } } })
      assert.deepEqual([refused.kind, 'reason' in refused ? refused.reason : null], ['conflict', 'precondition_failed'], JSON.stringify(refused))
      const made = await connector.write({ id: 'a', expectedVersion: '1', set: { status: 'early' }, precondition: { d: { lt: NOON } } })
      assert.equal(made.kind, 'written', JSON.stringify(made))
      assert.deepEqual(await engine.rows("select status from days where id = 'a'"), [{ status: 'early' }])
    })
  })
}

/**
 * A timestamp version over a column without a zone is matched as the UTC time a record shows, whatever the
 * database's own TimeZone. PostgreSQL's condition cast the column to timestamptz in the session's zone: under
 * America/New_York a row at 12:00 (shown 12:00Z) was 16:00Z there, no write ever matched, and each was answered
 * "no longer meets the action's precondition", about a record nobody changed.
 */
for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: a timestamp version without a zone, the database in New York time`, () => {
    let engine: Engine
    const V0 = '2024-06-01T12:00:00.000Z'
    before(async () => {
      engine = await createEngine(kind)
      if (kind === 'postgres') await engine.exec("do $$ begin execute format('alter database %I set timezone = %L', current_database(), 'America/New_York'); end $$")
      await engine.exec(`create table stamped (id varchar(10) primary key, version ${ZONELESS[kind][0]} not null, status varchar(10))`)
      await engine.exec("insert into stamped values ('a', '2024-06-01 12:00:00', 'active'), ('b', '2024-06-01 12:00:00', 'active'), ('c', '2024-06-01 12:00:00', 'active')")
    })
    after(() => engine?.drop())
    const connector = () => engine.connector('stamped', { id: 'string', version: 'timestamp', status: 'string' }, {}, { now: () => new Date(Date.parse(V0) + 5000) })

    it('a write at the version a record shows is made and moves it; a stale one is version_changed', async () => {
      const c = connector()
      const read = await c.readByIds(['a'])
      assert.equal(read.records.get('a')?.version, V0)
      const made = await c.write({ id: 'a', expectedVersion: V0, set: { status: 'paused' }, precondition: {} })
      assert.equal(made.kind, 'written', JSON.stringify(made))
      assert.equal(made.kind === 'written' ? made.record?.version : null, '2024-06-01T12:00:05.000Z')
      const stale = await c.write({ id: 'a', expectedVersion: V0, set: { status: 'cancelled' }, precondition: {} })
      assert.deepEqual([stale.kind, 'reason' in stale ? stale.reason : null], ['conflict', 'version_changed'], JSON.stringify(stale))
      assert.deepEqual(await engine.rows("select status from stamped where id = 'a'"), [{ status: 'paused' }])
    })

    it('a window is written the same way', { skip: kind === 'mysql' ? 'MySQL writes one target at a time' : false }, async () => {
      const outcomes = await connector().writeWindow!(['b', 'c'].map((id) => ({ id, expectedVersion: V0, set: { status: 'paused' }, precondition: {} })))
      assert.deepEqual(outcomes.map((o) => o.kind), ['written', 'written'], JSON.stringify(outcomes))
    })
  })
}

/**
 * A write setting a timestamp written with an offset stores the instant it names. PostgreSQL dropped the offset
 * going into a column without a zone: asked 2024-07-01T02:00:00+02:00 (00:00Z), the row held 02:00, shown 02:00Z,
 * written and committed.
 */
for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: a timestamp set with an offset, into a column without a zone`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table moved (id varchar(10) primary key, version integer not null, ts ${ZONELESS[kind][0]})`)
      await engine.exec("insert into moved values ('a', 1, '2024-06-01 12:00:00'), ('b', 1, '2024-06-01 12:00:00'), ('c', 1, '2024-06-01 12:00:00')")
    })
    after(() => engine?.drop())
    const connector = () => engine.connector('moved', { id: 'string', version: 'integer', ts: 'timestamp' })

    it('the row holds the instant asked, as a record shows it', async () => {
      const made = await connector().write({ id: 'a', expectedVersion: '1', set: { ts: '2024-07-01T02:00:00+02:00' }, precondition: {} })
      assert.equal(made.kind === 'written' ? made.record?.fields.ts : JSON.stringify(made), '2024-07-01T00:00:00.000Z')
      assert.equal((await connector().readByIds(['a'])).records.get('a')?.fields.ts, '2024-07-01T00:00:00.000Z')
    })

    it('a window too', { skip: kind === 'mysql' ? 'MySQL writes one target at a time' : false }, async () => {
      const outcomes = await connector().writeWindow!(['b', 'c'].map((id) => ({ id, expectedVersion: '1', set: { ts: '2024-07-01T02:00:00+02:00' }, precondition: {} })))
      assert.deepEqual(outcomes.map((o) => (o.kind === 'written' ? o.record?.fields.ts : o.kind)), ['2024-07-01T00:00:00.000Z', '2024-07-01T00:00:00.000Z'])
    })
  })
}
