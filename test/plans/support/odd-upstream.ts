import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import type { Actor } from '../../../src/contract/index.js'
import type { WarrantConfig } from '../../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../../src/gateway/index.js'
import { sendJson, startUpstream, type TestUpstream } from '../../connectors/http/upstream-server.js'
import { startDemoGateway } from '../../support/gateway-fixture.js'
import type { StoreKind } from '../../support/stores.js'

/** A thing of the odd upstream: string ids with '/', '%', unicode and markup; versions as weak ETags. */
export interface Thing {
  id: string
  name: string
  status: string
  note: string
}

export interface OddUpstream extends TestUpstream {
  readonly things: Map<string, Thing>
  readonly writes: Map<string, number>
}

/** Ids no demo has: a slash, a percent sign (and an encoded-looking one), unicode, markup, a space, dots. */
export const ODD_IDS = ['a/b', '100%', '%2F', 'ü-ñ-東京', '<img src=x onerror=alert(1)>', 'x y', 'plain'] as const

export const etagOf = (t: Thing) => `W/"${createHash('sha1').update(JSON.stringify(t)).digest('hex').slice(0, 12)}"`

/**
 * A loopback REST API unlike the demo: `GET /things?after=&limit=` answers `{things, next}` keyset by id, each
 * thing carrying its weak ETag in `etag`; `GET /things/{id}` answers it with an `ETag` header; `PATCH` needs
 * `If-Match` with that ETag (412 otherwise) and answers the thing with its new ETag; so does `PUT`, which replaces it whole.
 */
export async function startOddUpstream(extra: readonly Thing[] = []): Promise<OddUpstream> {
  const things = new Map<string, Thing>()
  for (const id of ODD_IDS) things.set(id, { id, name: `<script>alert("${id}")</script>`, status: 'open', note: 'n' })
  for (const t of extra) things.set(t.id, { ...t })
  const writes = new Map<string, number>()
  const upstream = await startUpstream((req, res) => {
    if (req.method === 'GET' && req.url.pathname === '/things') {
      const limit = Math.min(100, Number(req.url.searchParams.get('limit') ?? 50))
      const after = req.url.searchParams.get('after') ?? ''
      const ids = [...things.keys()].sort().filter((id) => id > after)
      const page = ids.slice(0, limit)
      return sendJson(res, 200, { things: page.map((id) => ({ ...things.get(id)!, etag: etagOf(things.get(id)!) })), next: ids.length > limit ? page.at(-1) : null })
    }
    const m = /^\/things\/(.+)$/.exec(req.url.pathname)
    const thing = m ? things.get(decodeURIComponent(m[1]!)) : undefined
    if (!thing) return sendJson(res, 404, { error: 'not found' })
    if (req.method === 'GET') return sendJson(res, 200, thing, { etag: etagOf(thing) })
    if (req.method !== 'PATCH' && req.method !== 'PUT') return sendJson(res, 405, { error: 'method' })
    if (req.headers['if-match'] !== etagOf(thing)) return sendJson(res, 412, { error: 'precondition failed' })
    const patch = JSON.parse(req.body || '{}') as Partial<Thing>
    // a PUT replaces the thing's every member but its id (a replacing write sends it whole)
    if (req.method === 'PUT') for (const key of ['name', 'status', 'note'] as const) thing[key] = String(patch[key] ?? '')
    if (typeof patch.status === 'string') thing.status = patch.status
    if (req.method === 'PATCH' && typeof patch.note === 'string') thing.note = patch.note
    writes.set(thing.id, (writes.get(thing.id) ?? 0) + 1)
    return sendJson(res, 200, thing, { etag: etagOf(thing) })
  })
  return { ...upstream, things, writes }
}

/** The config of a `things` resource over this upstream. */
export function thingsResourceConfig(origin: string, approval: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    description: 'Things of an odd REST API (test upstream)',
    environment: { name: 'things-<b>prod</b>', host: origin },
    connector: {
      kind: 'http',
      sources: [{ name: 'odd', base_url: origin }],
      list: { path: '/things', page_size_param: 'limit', items_path: 'things', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'next' } },
      get: { path: '/things/{id}' },
      version: { from: 'etag' },
    },
    fields: { id: 'string', name: 'string', status: 'string', note: 'string' },
    review_fields: ['id', 'name', 'status', 'note'],
    approval,
    actions: {
      set_status: {
        description: 'Set the status of a thing',
        params: { status: { type: 'string' } },
        set: { status: '{{params.status}}' },
        precondition: { status: 'open' },
        write: { method: 'PATCH', path: '/things/{id}', body: { status: '{{set.status}}' }, if_match: true },
      },
    },
  }
}

/**
 * A served demo gateway (a SQLite store unless `kind` says) whose `things` resource reads an odd upstream, and an agent
 * token scoped to it. `edit` changes the rest of the config before it is parsed.
 */
export async function startThingsGateway(extra: readonly Thing[] = [], kind: StoreKind = 'sqlite', edit?: (raw: Record<string, any>) => void) {
  const up = await startOddUpstream(extra)
  const fx = await startDemoGateway({
    store: kind,
    count: 20,
    edit: (c) => {
      c.resources.things = thingsResourceConfig(up.origin)
      edit?.(c)
    },
  })
  const token = (await fx.gateway.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token
  return {
    up,
    fx,
    token,
    async close() {
      await fx.close()
      await up.close()
    },
  }
}

/** How `startThingsToMove` configures `things` (`edit`) and what `move()` changes (`move`; default: base_url to production). */
export interface ThingsMove {
  /** `config`: the whole raw config, for keys beside the resource */
  readonly edit?: (things: Record<string, any>, config: Record<string, any>) => void
  readonly move?: (things: Record<string, any>) => void
  /** Changes beside the resource that `move()` makes too (`execution:`, say); with it alone, the connector stays where it was. */
  readonly moveConfig?: (config: Record<string, any>) => void
}

/**
 * A demo gateway whose `things` resource reads a staging odd upstream, an agent scoped to it, and `move()`: a second
 * gateway on the same store and config but with the connector's base_url pointed at a production copy (the
 * environment label left as it was). `close()` closes them all.
 */
export async function startThingsToMove(kind: StoreKind, change: ThingsMove = {}) {
  const staging = await startOddUpstream()
  const production = await startOddUpstream()
  const fx = await startDemoGateway({
    store: kind,
    count: 20,
    serve: false,
    edit: (c) => {
      c.resources.things = thingsResourceConfig(staging.origin)
      change.edit?.(c.resources.things, c)
    },
  })
  const issued = await fx.gateway.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })
  const agent = await fx.gateway.principals.authenticate(issued.token, 'http')
  let moved: Gateway | undefined
  return {
    fx,
    agent,
    staging,
    production,
    async move(): Promise<Gateway> {
      // Two gateways on one SQLite file in one process: each hands over with nothing of its own still to write (audit
      // rows linger before they are appended), so neither waits out the other's write lock.
      await fx.gateway.audit.flush()
      const config = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
      if (change.move) change.move(config.resources.things)
      else if (!change.moveConfig) config.resources.things.connector.sources[0].base_url = production.origin
      change.moveConfig?.(config)
      moved = await openGateway({ config, log: createLogger({ level: 'silent' }) })
      return moved
    },
    /** Before the first gateway is used again after the moved one: the moved one's audit rows appended first (see `move`). */
    async handBack(): Promise<void> {
      await moved?.audit.flush()
    },
    async close() {
      await moved?.close()
      await fx.close()
      await staging.close()
      await production.close()
    },
  }
}

/** A selection of the open things and a plan closing them, approved by the fixture's first reviewer. */
export async function approvedClosingPlan(fx: { gateway: Gateway; tokens: { reviewer: string } }, agent: Actor) {
  const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
  const selection = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
  const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
  await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
  return { selection, plan }
}

/** `approvedClosingPlan` committed and run to its end, every thing of `upstream` closed: the operation to compensate. */
export async function closedByOperation(fx: { gateway: Gateway; tokens: { reviewer: string } }, agent: Actor, upstream: OddUpstream) {
  const { plan } = await approvedClosingPlan(fx, agent)
  const receipt = await fx.gateway.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: randomUUID(), expectedDigest: plan.plan_digest })
  const done = await fx.gateway.operations.waitFor(receipt.operation_id, 30_000)
  assert.equal(done.counts.succeeded, upstream.things.size, JSON.stringify(done.counts))
  return { plan, receipt }
}
