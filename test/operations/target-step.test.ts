import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { resourceSchema } from '../../src/config/schema.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { judge, prepare, readWindow, type TargetContext } from '../../src/operations/target-step.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { judgeOnePause } from './one-write-judged.js'

/**
 * An upstream whose PATCH is asynchronous (a job queue): it answers 202 Accepted and applies the change
 * later. A 202 says the write was taken, not that it was done, so its answer neither proves nor
 * contradicts the effect: the record is re-read, and not holding the effect yet, the target is `unknown`
 * (reason `effect_pending`) and the operation halts there, for a person to reconcile. Before, it was `failed` (effect_contradicted), on the status alone when 202 was not expected and
 * on the immediate re-read (not yet changed) when it was; yet the write landed, and a `failed` target is never
 * revisited by reconciliation nor undone by a compensation.
 */
describe('a write answered 202 Accepted (applied a moment later)', () => {
  let upstream: TestUpstream
  const doc = { id: 'a1', status: 'active', collection: 'active', version: 1 }
  let answer: (res: Parameters<Parameters<typeof startUpstream>[0]>[1]) => void = () => {}
  let queued: (() => void) | null = null
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, doc)
      const patch = JSON.parse(req.body) as Record<string, unknown>
      // applied later, when the test says so: never before the judge's re-read, however slow the machine
      queued = () => Object.assign(doc, patch, { version: doc.version + 1 })
      answer(res)
    })
  })
  after(() => upstream.close())

  async function judged(expectStatus: number[]) {
    Object.assign(doc, { collection: 'active', version: 1 })
    return judgeOnePause(upstream.origin, expectStatus, () => {
      queued?.()
      queued = null
      assert.equal(doc.collection, 'paused', 'the upstream applied the accepted write')
    })
  }

  const cases: [string, number[], (res: Parameters<typeof answer>[0]) => void][] = [
    ['202 not in expect.status, empty body', [200, 201, 204], (res) => (res.writeHead(202), res.end())],
    ['202 declared in expect.status, empty body', [202], (res) => (res.writeHead(202), res.end())],
    // a body echoing the approved values is what the upstream intends, not what it holds yet
    ['202 declared, a body echoing the approved values', [202], (res) => sendJson(res, 202, { ...doc, collection: 'paused', version: 2 })],
  ]
  for (const [name, expectStatus, respond] of cases) {
    test(`${name}: unknown (effect_pending), and the operation halts there`, async () => {
      answer = respond
      const attempt = await judged(expectStatus)
      assert.ok(attempt.kind === 'done')
      const { state, reason, upstream_status, message } = attempt.outcome
      assert.deepEqual([state, reason, upstream_status], ['unknown', 'effect_pending', 202], `${state} (${reason}: ${message})`)
      assert.match(message ?? '', /202 Accepted/)
      assert.match(message ?? '', /reconcile/)
      assert.equal(attempt.observed.halt?.rule, 'effect_pending')
      assert.match(attempt.observed.halt?.message ?? '', /target "a1": .*202 Accepted/)
    })
  }

  test('202 from an upstream that applied the write before answering: the re-read proves it, succeeded', async () => {
    answer = (res) => {
      Object.assign(doc, { collection: 'paused', version: 2 })
      res.writeHead(202)
      res.end()
    }
    const attempt = await judged([200])
    assert.ok(attempt.kind === 'done')
    assert.deepEqual([attempt.outcome.state, attempt.outcome.reason, attempt.outcome.upstream_status, attempt.outcome.after_version], ['succeeded', null, 202, '2'])
    assert.equal(attempt.observed.halt, undefined)
  })
})

/**
 * A batch read (get.batch) checks that its answer is whole by reading ONE sampled record alone and comparing. A list
 * endpoint that abbreviates only some records (a long text cut to an excerpt, as list views often do) passes the
 * sample when the sampled record is short, and the abbreviated record is then trusted as whole. A replacing write
 * (style: replace) sends that representation back: the long text is cut upstream, and the effect check (before =
 * the same abbreviated read) calls it succeeded.
 */
describe('batch read answering a summary of some records, then a replacing write', () => {
  let upstream: TestUpstream
  const LONG = 'x'.repeat(300)
  const docs: Record<string, any> = {
    a: { id: 'a', status: 'active', notes: 'short', version: 1 },
    b: { id: 'b', status: 'active', notes: LONG, version: 1 },
  }
  const listView = (d: any) => ({ ...d, notes: d.notes.length > 200 ? d.notes.slice(0, 200) + '…' : d.notes })
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const url = new URL(req.url!, 'http://x')
      if (req.method === 'GET' && url.pathname === '/items') {
        const ids = (url.searchParams.get('ids') ?? '').split(',').filter(Boolean)
        return sendJson(res, 200, { items: ids.map((id) => docs[id]).filter(Boolean).map(listView) })
      }
      const id = url.pathname.split('/').pop()!
      if (req.method === 'GET') return docs[id] ? sendJson(res, 200, docs[id]) : sendJson(res, 404, {})
      if (req.method === 'PUT') {
        const body = JSON.parse(req.body)
        if (String(body.version) !== String(docs[id].version)) return sendJson(res, 412, {})
        docs[id] = { ...body, version: docs[id].version + 1 }
        return sendJson(res, 200, docs[id])
      }
      return sendJson(res, 405, {})
    })
  })
  after(() => upstream.close())

  test('a replacing write is built from the record read alone, never from a batch answer: the notes stay whole', async () => {
    const resource = resourceSchema.parse({
      environment: { name: 'probe' },
      connector: {
        kind: 'http',
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', pagination: { style: 'cursor' } },
        get: { path: '/items/{id}', batch: { path: '/items', ids_param: 'ids' } },
        version: { from: 'field', field: 'version' },
      },
      fields: { id: 'string', status: 'string', version: 'integer' },
      review_fields: ['id'],
      actions: { pause: { set: { status: 'paused' }, write: { method: 'PUT', path: '/items/{id}', style: 'replace' } } },
    })
    const connector = createHttpConnector({ resource })
    const ctx = {
      connector,
      versionEnforced: true, // a write probe proved the version is enforced for this action
      hidden: new Set<string>(),
      fieldTypes: resource.fields,
      execution: { action_config: resource.actions.pause, plan: { resource: 'items', plan_id: 'p' }, selection: { digest: 'd', selection_id: 's' } },
      operationId: 'op',
      render: ({ id }: { id: string }) => ({
        set: { status: 'paused' },
        http: { method: 'PUT', path: `/items/${id}`, ifMatch: false, style: 'replace', version: { in: 'body', path: 'version' } },
        expect: { status: [200, 201, 204], fields: { status: 'paused' } },
        precondition: {},
        exempt: ['status', 'version'],
      }),
    } as unknown as TargetContext
    const targets = ['a', 'b'].map((id, i) => ({ ord: i + 1, record_id: id, expected_version: '1' }))
    const window = await readWindow(ctx, targets as never)
    assert.ok(window, 'window read')
    const states: string[] = []
    for (const t of targets) {
      const prepared = await prepare(ctx, t as never, window!.get(t.record_id))
      assert.equal(prepared.kind, 'write')
      if (prepared.kind !== 'write') continue
      const attempt = await judge(ctx, prepared, { outcome: await connector.write(prepared.request) })
      states.push(attempt.kind === 'done' ? attempt.outcome.state : attempt.kind)
    }
    assert.equal(docs.b.status, 'paused')
    assert.equal(docs.b.notes, LONG, `b's notes were cut to ${docs.b.notes.length} chars by the replacing write, and the target is "${states[1]}"`)
    assert.deepEqual(states, ['succeeded', 'succeeded'])
  })
})
