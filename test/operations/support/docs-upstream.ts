import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startDemoGateway, type GatewayFixture } from '../../support/gateway-fixture.js'

/**
 * A document API on 127.0.0.1 shaped like CouchDB, not like the demo: records keyed `_id`, versioned by a
 * `_rev` that changes on every write, carrying fields no Warrant config declares (nested objects, lists, a
 * secret). Documents are stored as the JSON text last written, so a test can compare bytes.
 *
 * - `GET /docs?limit&cursor` lists `{items, next_cursor}`; `GET /docs/{id}` reads one (`ETag` = `_rev`).
 * - `PUT /docs/{id}` replaces the whole document with the body, as PUT does: the body's `_rev` must be the
 *   current one, else `409` (CouchDB's stale-revision answer). Answers `201 {ok, id, rev}`: not the record.
 * - `PATCH /docs/{id}` behaves as `patch` says: `merge` (a partial update, answers the record), `destroy`
 *   (replaces the document with the body, answers 204: an upstream whose "PATCH" is really a PUT),
 *   `strip` (merges, drops every member the test config does not declare, answers 204),
 *   `other_record` (merges, but answers another document).
 * - `POST /docs/{id}/pause` sets `status: paused` itself (an action endpoint) and answers `202 {ok: true}`;
 *   with `pauseErases`, it also drops the `profile` field.
 */
export interface DocsUpstream {
  readonly origin: string
  /** id → the document's JSON text as stored */
  readonly docs: Map<string, string>
  /** write requests received (PUT, PATCH, POST), in order: `METHOD id` */
  readonly writes: string[]
  /** the bodies of the write requests received, in order */
  readonly bodies: string[]
  patch: 'merge' | 'destroy' | 'strip' | 'other_record'
  pauseErases: boolean
  /** runs before a PUT is applied (e.g. another writer changes the document first) */
  beforePut: ((id: string) => void) | null
  doc(id: string): Record<string, unknown>
  /** changes a document as another client would: new `_rev` */
  touch(id: string, change: Record<string, unknown>): void
  close(): Promise<void>
}

export const docIdOf = (i: number) => `doc-${String(i).padStart(3, '0')}`

/** The document a test starts from: declared fields plus undeclared nested ones, a denied secret. */
export function seedDoc(i: number): Record<string, unknown> {
  return {
    _id: docIdOf(i),
    _rev: `1-${i}`,
    name: `Doc ${i}`,
    status: 'active',
    secret: `sk-${i}-do-not-leak`,
    profile: { tier: i % 2 ? 'gold' : 'silver', seats: [i, i + 1], address: { city: 'Lyon', zip: null } },
    history: [{ at: '2024-01-01T00:00:00Z', by: 'import' }],
    'odd key': 'ünïcode ✓',
    ratio: 0.1 + 0.2,
  }
}

export async function startDocsUpstream(count: number): Promise<DocsUpstream> {
  const docs = new Map<string, string>()
  for (let i = 1; i <= count; i++) docs.set(docIdOf(i), JSON.stringify(seedDoc(i)))
  const writes: string[] = []
  const bodies: string[] = []
  let serial = 0
  const nextRev = (rev: unknown) => `${Number(String(rev).split('-')[0]) + 1}-w${++serial}`
  const parse = (id: string) => JSON.parse(docs.get(id)!) as Record<string, unknown>
  const state = { patch: 'merge' as DocsUpstream['patch'], pauseErases: false, beforePut: null as DocsUpstream['beforePut'] }

  const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body)
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
    res.end(text)
  }
  const handle = (req: IncomingMessage, body: string, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (req.method === 'GET' && url.pathname === '/docs') {
      const limit = Math.min(Number(url.searchParams.get('limit') ?? 100), 500)
      const after = url.searchParams.get('cursor') ?? ''
      const ids = [...docs.keys()].sort().filter((id) => id > after)
      const items = ids.slice(0, limit).map((id) => parse(id))
      return send(res, 200, { items, next_cursor: ids.length > limit ? ids[limit - 1] : null })
    }
    const m = /^\/docs\/([^/]+)(\/pause)?$/.exec(url.pathname)
    if (!m) return send(res, 404, { error: 'not_found', reason: 'no route' })
    const id = decodeURIComponent(m[1]!)
    if (!docs.has(id)) return send(res, 404, { error: 'not_found', reason: 'missing' })
    const current = parse(id)
    if (req.method === 'GET' && !m[2]) return send(res, 200, docs.get(id)!, { etag: `"${String(current._rev)}"` })
    writes.push(`${req.method} ${id}`)
    bodies.push(body)
    if (req.method === 'POST' && m[2]) {
      const next: Record<string, unknown> = { ...current, status: 'paused', _rev: nextRev(current._rev) }
      if (state.pauseErases) delete next.profile
      docs.set(id, JSON.stringify(next))
      return send(res, 202, { ok: true })
    }
    if (req.method === 'PUT') {
      state.beforePut?.(id)
      const now = parse(id)
      const doc = JSON.parse(body) as Record<string, unknown>
      if (doc._rev !== now._rev) return send(res, 409, { error: 'conflict', reason: 'Document update conflict.' })
      const rev = nextRev(now._rev)
      // The body as sent becomes the document; only _id and _rev are the server's (in place, when present).
      docs.set(id, JSON.stringify(Object.assign(doc, { _id: id, _rev: rev })))
      return send(res, 201, { ok: true, id, rev })
    }
    if (req.method === 'PATCH') {
      const ifMatch = String(req.headers['if-match'] ?? '').replace(/^"(.*)"$/, '$1')
      if (ifMatch !== current._rev) return send(res, 412, { error: 'precondition_failed' })
      const patch = JSON.parse(body || '{}') as Record<string, unknown>
      const rev = nextRev(current._rev)
      if (state.patch === 'destroy') {
        docs.set(id, JSON.stringify({ _id: id, _rev: rev, ...patch }))
        return send(res, 204)
      }
      const next: Record<string, unknown> = { ...current, ...patch, _rev: rev }
      if (state.patch === 'strip') {
        const { _id, name, status, secret } = next
        docs.set(id, JSON.stringify({ _id, _rev: rev, name, status, secret }))
        return send(res, 204)
      }
      docs.set(id, JSON.stringify(next))
      if (state.patch === 'other_record') {
        const other = [...docs.keys()].find((k) => k !== id)!
        return send(res, 200, { ...parse(other), status: next.status })
      }
      return send(res, 200, next)
    }
    return send(res, 405, { error: 'method_not_allowed' })
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      try {
        handle(req, Buffer.concat(chunks).toString('utf8'), res)
      } catch (error) {
        if (!res.headersSent) send(res, 500, { error: String(error) })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://127.0.0.1:${port}`,
    docs,
    writes,
    bodies,
    get patch() {
      return state.patch
    },
    set patch(v) {
      state.patch = v
    },
    get pauseErases() {
      return state.pauseErases
    },
    set pauseErases(v) {
      state.pauseErases = v
    },
    get beforePut() {
      return state.beforePut
    },
    set beforePut(v) {
      state.beforePut = v
    },
    doc: (id) => parse(id),
    touch(id, change) {
      const current = parse(id)
      docs.set(id, JSON.stringify({ ...current, ...change, _rev: nextRev(current._rev) }))
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A `docs` resource over this upstream; `write` is the `set_status` action's write config, `expect` its expect. */
export function docsResourceConfig(origin: string, write: Record<string, unknown>, expect?: Record<string, unknown>): Record<string, unknown> {
  return {
    description: 'Documents of a CouchDB-like API (test upstream)',
    environment: { name: 'docs-test', host: origin },
    connector: {
      kind: 'http',
      sources: [{ name: 'main', base_url: origin }],
      timeout_ms: 5000,
      list: { path: '/docs', page_size_param: 'limit', pagination: { style: 'cursor', param: 'cursor', next_cursor_path: 'next_cursor' }, items_path: 'items' },
      get: { path: '/docs/{id}' },
      version: { from: 'field', field: '_rev' },
    },
    fields: { _id: 'string', _rev: 'string', name: 'string', status: 'string', secret: 'string' },
    id_field: '_id',
    version_field: '_rev',
    review_fields: ['_id', 'name', 'status'],
    denied_fields: ['secret'],
    actions: {
      set_status: {
        description: 'Set the status of a document',
        params: { status: { type: 'string' } },
        set: { status: '{{params.status}}' },
        precondition: { status: 'active' },
        write,
        ...(expect ? { expect } : {}),
      },
    },
  }
}

/**
 * A demo gateway (SQLite store) with the `docs` resource on this upstream, its write setting `status` by PATCH on
 * /docs/{id}, in batches of 5 at concurrency 2.
 */
export function startDocsGateway(upstream: DocsUpstream): Promise<GatewayFixture> {
  return startDemoGateway({
    store: 'sqlite',
    count: 20,
    edit: (raw) => {
      raw.resources.docs = docsResourceConfig(upstream.origin, { path: '/docs/{id}', body: { status: '{{set.status}}' } })
      raw.execution = { concurrency: 2, batch_size: 5 }
    },
  })
}
