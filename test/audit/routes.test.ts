import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { OpenAPIHono } from '@hono/zod-openapi'
import { sql } from 'kysely'
import { fromZodError, toErrorResponse } from '../../src/api/error-mapping.js'
import type { ApiEnv } from '../../src/api/authenticate.js'
import { auditPageSchema, registerAuditRoutes, verifyResultSchema } from '../../src/api/routes/audit.js'
import { createAuditLog, type AuditLog } from '../../src/audit/index.js'
import type { Actor, Role } from '../../src/contract/index.js'
import { createLogger } from '../../src/gateway/index.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'

const actorFor = (role: Role): Actor => ({ principal: `prn_${role}`, name: role, role, scopes: { resources: '*', actions: '*' }, surface: 'http' })

/** The audit routes on a bare app: the same validation hook and error mapping as the real one, the role from a header. */
function appFor(audit: AuditLog) {
  const app = new OpenAPIHono<ApiEnv>({
    defaultHook: (result) => {
      if (!result.success) throw fromZodError(result.error, `request ${result.target}`)
    },
  })
  app.onError((error, c) => toErrorResponse(error, c, createLogger({ level: 'silent' })))
  app.use('/v1/*', async (c, next) => {
    c.set('actor', actorFor((c.req.header('x-role') ?? 'agent') as Role))
    await next()
  })
  registerAuditRoutes(app, { audit })
  const get = async (path: string, role: Role) => {
    const response = await app.request(path, { headers: { 'x-role': role } })
    return { status: response.status, body: (await response.json()) as any }
  }
  return { app, get }
}

for (const kind of STORE_KINDS) {
  describe(`audit routes (${kind})`, () => {
    let ts: TestStore
    let audit: AuditLog
    let get: ReturnType<typeof appFor>['get']
    let app: ReturnType<typeof appFor>['app']
    before(async () => {
      ts = await createTestStore(kind, { clock: (() => { let t = Date.parse('2025-01-31T12:00:00.000Z'); return () => new Date((t += 60_000)) })() })
      audit = createAuditLog({ store: ts.store })
      ;({ get, app } = appFor(audit))
      await audit.record({ actor: actorFor('agent'), action: 'mcp:commit_change', plan_id: 'plan_1', operation_id: 'op_1', summary: { idempotency_key: 'k' } })
      for (const id of ['a', 'b', 'c']) audit.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', targetId: id, status: null, outcome: 'written', durationMs: 1, operation_id: 'op_1' })
      await audit.flush()
      await audit.record({ actor: actorFor('reviewer'), surface: 'ui', action: 'POST /v1/plans/{id}/approvals', plan_id: 'plan_2', details: { decision: 'reject' } })
    })
    after(() => ts?.drop())

    test('an agent is refused with 403 forbidden', async () => {
      for (const path of ['/v1/audit', '/v1/audit/verify']) {
        const { status, body } = await get(path, 'agent')
        assert.equal(status, 403)
        assert.equal(body.error.code, 'forbidden')
      }
    })

    test('a reviewer or admin reads filtered pages of events', async () => {
      const { status, body } = await get('/v1/audit?operation_id=op_1&level=call', 'reviewer')
      assert.equal(status, 200)
      auditPageSchema.parse(body)
      assert.deepEqual(body.events.map((e: any) => e.target_id), ['a', 'b', 'c'])
      assert.equal(body.next_cursor, null)
      const first = await get('/v1/audit?limit=2', 'admin')
      assert.deepEqual(first.body.events.map((e: any) => e.seq), [1, 2])
      assert.equal(first.body.next_cursor, 2)
      const second = await get(`/v1/audit?limit=2&cursor=${first.body.next_cursor}`, 'admin')
      assert.deepEqual(second.body.events.map((e: any) => e.seq), [3, 4])
      const third = await get(`/v1/audit?limit=2&cursor=${second.body.next_cursor}`, 'admin')
      assert.deepEqual(third.body.events.map((e: any) => e.seq), [5])
      assert.equal(third.body.next_cursor, null)
      const byPrincipal = await get('/v1/audit?principal=prn_reviewer', 'reviewer')
      assert.deepEqual(byPrincipal.body.events.map((e: any) => [e.surface, e.details.decision]), [['ui', 'reject']])
      // events are one minute apart from 12:01; an offset timestamp is compared as the instant it names
      const window = await get(`/v1/audit?since=${encodeURIComponent('2025-01-31T13:02:00+01:00')}&until=2025-01-31T12:04:00Z`, 'reviewer')
      assert.deepEqual(window.body.events.map((e: any) => e.seq), [2, 3])
    })

    test('a bad query is 400 invalid_request naming the parameter', async () => {
      // an instant outside years 0000..9999 in UTC has no stored spelling to compare with: `+010000-…` sorted before
      // every stored `2025-…`, so `since` in year 10000 answered the whole log and `until` there nothing
      const outside = [`since=${encodeURIComponent('9999-12-31T23:59:59-14:00')}`, `until=${encodeURIComponent('9999-12-31T23:00:00-01:00')}`, `until=${encodeURIComponent('0000-01-01T00:00:00+14:00')}`]
      for (const query of ['level=everything', 'limit=0', 'limit=5000', 'cursor=abc', 'since=yesterday', 'plan_id=', ...outside]) {
        const { status, body } = await get(`/v1/audit?${query}`, 'reviewer')
        assert.equal(status, 400, query)
        assert.equal(body.error.code, 'invalid_request', query)
        assert.ok(body.error.details.problems.some((p: any) => query.startsWith(p.path)), `${query}: ${body.error.message}`)
      }
    })

    // `at >= since and at < until` with since at or after until matches nothing: the answer was an empty last page,
    // `next_cursor: null`, which reads as "no events in that range" for a range that holds none by construction
    test('a since at or after until is 400 naming both; instants compare across offsets', async () => {
      const range = (since: string, until: string) => `since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`
      for (const query of [range('2026-01-02T00:00:00Z', '2026-01-01T00:00:00Z'), range('2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), range('2026-01-01T10:00:00+05:00', '2026-01-01T04:00:00Z')]) {
        const { status, body } = await get(`/v1/audit?${query}`, 'reviewer')
        assert.equal(status, 400, query)
        assert.equal(body.error.code, 'invalid_request', query)
        assert.match(body.error.message, /since .*until|until .*since/, query)
      }
      const later = await get(`/v1/audit?${range('2026-01-01T10:00:00+05:00', '2026-01-01T06:00:00Z')}`, 'reviewer')
      assert.equal(later.status, 200, JSON.stringify(later.body))
    })

    test('GET /v1/audit/verify returns the verify result', async () => {
      const good = await get('/v1/audit/verify', 'reviewer')
      assert.equal(good.status, 200)
      const parsed = verifyResultSchema.parse(good.body)
      assert.deepEqual(parsed, { ...parsed, ok: true, rows: 5, last_seq: 5, last_hash: good.body.last_hash })
      await sql`update audit_events set target_id = 'z' where seq = 3`.execute(ts.store.db)
      try {
        const bad = await get('/v1/audit/verify', 'admin')
        assert.equal(bad.status, 200)
        verifyResultSchema.parse(bad.body)
        assert.equal(bad.body.ok, false)
        assert.equal(bad.body.first_bad_seq, 3)
        assert.equal(bad.body.problem, 'altered')
      } finally {
        await sql`update audit_events set target_id = 'b' where seq = 3`.execute(ts.store.db)
      }
    })

    test('the routes appear in the OpenAPI document', () => {
      const doc = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '0' } })
      assert.ok(doc.paths?.['/v1/audit']?.get)
      assert.ok(doc.paths?.['/v1/audit/verify']?.get)
    })
  })
}
