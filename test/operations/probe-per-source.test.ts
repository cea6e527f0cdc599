import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { readVersionProof, recordVersionProof, versionProofDigest, vouches, VERSION_PROOF_MAX_AGE_MS } from '../../src/operations/index.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { runWarrant } from '../support/cli-config.js'
import { STORE_KINDS, type StoreKind } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'

/**
 * A parts catalogue over two sources, each its own upstream: "strict" refuses a PATCH whose If-Match is not the
 * part's current `rev` (412); "lax" applies any PATCH. `warrant check --write-probe` probed one record, and its
 * `holds` vouched for the whole resource: an operation then skipped the re-read of each target before its write on
 * the lax source too, so a part changed there after its batch was read was written over. A probe now vouches for
 * the source it wrote to; a target of any other source is read again alone before its write.
 */

interface Part {
  sku: string
  label: string
  state: string
  rev: number
}

interface PartsUpstream {
  readonly server: TestUpstream
  readonly parts: Map<string, Part>
  /** called after each PATCH this upstream applied */
  onPatch?: (sku: string) => void
  /** called as each PATCH arrives, before the part is looked up */
  beforePatch?: (sku: string) => void
}

async function startParts(prefix: string, strict: boolean): Promise<PartsUpstream> {
  const parts = new Map<string, Part>()
  for (let i = 1; i <= 4; i++) parts.set(`${prefix}-00${i}`, { sku: `${prefix}-00${i}`, label: `Part ${prefix}${i}`, state: 'listed', rev: 1 })
  const up: { server?: TestUpstream; parts: Map<string, Part>; onPatch?: (sku: string) => void; beforePatch?: (sku: string) => void } = { parts }
  up.server = await startUpstream((req, res) => {
    if (req.method === 'GET' && req.url.pathname === '/catalog/parts') {
      // page numbers from 1, `per` a page; past the last part, an empty page
      const pg = Number(req.url.searchParams.get('pg') ?? '1')
      const per = Number(req.url.searchParams.get('per') ?? '50')
      return sendJson(res, 200, { result: { rows: [...parts.values()].slice((pg - 1) * per, pg * per) } })
    }
    const sku = decodeURIComponent(req.url.pathname.replace(/^\/catalog\/parts\//, ''))
    if (req.method === 'PATCH') up.beforePatch?.(sku)
    const part = parts.get(sku)
    if (!part) return sendJson(res, 404, { message: 'no such part' })
    if (req.method === 'GET') {
      res.setHeader('ETag', `"${part.rev}"`)
      return sendJson(res, 200, part)
    }
    if (req.method !== 'PATCH') return sendJson(res, 405, { message: 'method' })
    if (strict && String(req.headers['if-match'] ?? '').replace(/"/g, '') !== String(part.rev)) return sendJson(res, 412, { message: 'rev mismatch' })
    const body = JSON.parse(req.body) as Partial<Part>
    const next = { ...part, ...(body.state === undefined ? {} : { state: body.state }), rev: part.rev + 1 }
    parts.set(sku, next)
    up.onPatch?.(sku)
    return sendJson(res, 200, next)
  })
  return up as PartsUpstream
}

function partsResource(strict: string, lax: string): Record<string, unknown> {
  return {
    description: 'Parts of a catalogue over two sources (test upstreams)',
    environment: { name: 'parts-test', host: strict },
    connector: {
      kind: 'http',
      sources: [
        { name: 'strict', base_url: strict },
        { name: 'lax', base_url: lax },
      ],
      timeout_ms: 5000,
      list: { path: '/catalog/parts', page_size_param: 'per', pagination: { style: 'page', param: 'pg' }, items_path: 'result.rows' },
      get: { path: '/catalog/parts/{id}' },
      version: { from: 'field', field: 'rev' },
    },
    id_field: 'sku',
    fields: { sku: 'string', label: 'string', state: 'string', rev: 'integer' },
    version_field: 'rev',
    review_fields: ['sku', 'label', 'state'],
    actions: {
      delist: {
        description: 'Take a part off the catalogue',
        params: {},
        set: { state: 'delisted' },
        precondition: { state: 'listed' },
        write: { method: 'PATCH', path: '/catalog/parts/{id}', body: { state: '{{set.state}}' }, if_match: true },
        expect: { status: [200] },
      },
    },
  }
}

interface Ctx {
  readonly fx: GatewayFixture
  readonly strict: PartsUpstream
  readonly lax: PartsUpstream
  readonly agent: Caller
  readonly configFile: string
}

async function withParts(kind: StoreKind, body: (ctx: Ctx) => Promise<void>): Promise<void> {
  const strict = await startParts('S', true)
  const lax = await startParts('L', false)
  let fx: GatewayFixture | undefined
  let raw: Record<string, unknown> = {}
  try {
    fx = await startDemoGateway({
      store: kind,
      count: 5,
      edit: (config) => {
        config.resources.parts = partsResource(strict.server.origin, lax.server.origin)
        config.execution = { concurrency: 1, batch_size: 10 }
        raw = structuredClone(config)
      },
    })
    const configFile = join(fx.dir, 'warrant.json')
    writeFileSync(configFile, JSON.stringify(raw, null, 2))
    const token = (await fx.gateway.principals.issue({ name: 'parts-agent', role: 'agent', scopes: { resources: ['parts'], actions: ['delist'] } })).token
    await body({ fx, strict, lax, agent: caller(fx.base, token), configFile })
  } finally {
    await fx?.close()
    await strict.server.close()
    await lax.server.close()
  }
}

const getsById = (seen: readonly SeenRequest[], sku: string) => seen.filter((r) => r.method === 'GET' && r.url.pathname === `/catalog/parts/${sku}`).length
const patches = (seen: readonly SeenRequest[]) => seen.filter((r) => r.method === 'PATCH').length

/** Delists every part; at the first PATCH, someone else relabels L-003 on the lax source (its rev moves). */
async function delistAll(ctx: Ctx, key: string) {
  const { selection } = await selectProposeApprove(ctx.agent, [ctx.fx.as('reviewer')], 'parts', { filter: { state: 'listed' } }, { type: 'delist' })
  assert.equal(selection.count, 8)
  const relabel = () => {
    const part = ctx.lax.parts.get('L-003')!
    if (part.label === 'Relabelled meanwhile') return
    ctx.lax.parts.set('L-003', { ...part, label: 'Relabelled meanwhile', rev: part.rev + 1 })
  }
  ctx.strict.onPatch = relabel
  ctx.lax.onPatch = relabel
  const seenBefore = { strict: ctx.strict.server.seen.length, lax: ctx.lax.server.seen.length }
  const commit = await ctx.agent('POST', '/v1/resources/parts/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'delist' } }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  const operation = await waitForOperation(ctx.agent, commit.body.operation_id)
  return {
    operation,
    results: await allResults(ctx.agent, commit.body.operation_id),
    strictSeen: ctx.strict.server.seen.slice(seenBefore.strict),
    laxSeen: ctx.lax.server.seen.slice(seenBefore.lax),
  }
}

const versionProofRows = async (fx: GatewayFixture) => (await fx.gateway.store.db.selectFrom('kv').select('key').where('key', 'like', 'version_proof:%').execute()).length

for (const kind of STORE_KINDS) {
  describe(`a write probe vouches for the source it wrote to, no other (${kind} store)`, () => {
    test('a probe that held on the strict source: a lax part changed after its batch read is re-read, seen changed and skipped, never written over', () =>
      withParts(kind, async (ctx) => {
        const check = await runWarrant(['check', 'parts', '--write-probe', 'S-001', '--json', '--config', ctx.configFile], ctx.fx.dir)
        const probePatchesOnLax = patches(ctx.lax.server.seen)
        const run = await delistAll(ctx, `per-source-${kind}`)
        assert.equal(run.operation.state, 'completed_with_skips', JSON.stringify(run.operation))
        const outcome = (sku: string) => run.results.find((r) => r.id === sku)?.outcome
        assert.equal(outcome('L-003'), 'skipped', JSON.stringify(run.results))
        assert.deepEqual(ctx.lax.parts.get('L-003'), { sku: 'L-003', label: 'Relabelled meanwhile', state: 'listed', rev: 2 }, 'the change made meanwhile stands')
        // (no batch endpoint: the batch read is a GET per part) each lax part read again alone before its write; the
        // strict ones trust their batch read and the If-Match
        for (const sku of ['L-001', 'L-002', 'L-003', 'L-004']) assert.equal(getsById(run.laxSeen, sku), 2, `${sku} was written without its re-read`)
        for (const sku of ['S-001', 'S-002', 'S-003', 'S-004']) assert.equal(getsById(run.strictSeen, sku), 1, `${sku} is read with its batch only`)

        // and the report says it per source: strict held, lax holds no S-001 and was not probed
        const report = JSON.parse(check.stdout) as { guarantees: { name: string; status: string; source?: string; detail: string }[] }
        const probes = report.guarantees.filter((g) => g.name.startsWith('write_probe'))
        assert.deepEqual(
          probes.map((g) => [g.name, g.source, g.status]),
          [
            ['write_probe.delist@strict', 'strict', 'holds'],
            ['write_probe@lax', 'lax', 'unknown'],
          ],
          check.stdout + check.stderr,
        )
        assert.match(probes[1]!.detail, /--write-probe "lax=ID"/)
        assert.equal(probePatchesOnLax, 0, 'the lax source holds no S-001: nothing was written there')
      }))

    test('a probe kept before probes named their source vouches for nothing on a resource of several: every target is re-read', () =>
      withParts(kind, async (ctx) => {
        const config = ctx.fx.gateway.catalogue.get('parts').config
        const legacy = { resource: 'parts', action: 'delist', digest: versionProofDigest(config.connector, config.actions.delist), status: 'holds' as const, record_id: 'S-001', probed_at: new Date().toISOString(), detail: 'kept before sources' }
        await recordVersionProof(ctx.fx.gateway.store.db, legacy)
        const run = await delistAll(ctx, `legacy-${kind}`)
        assert.equal(run.operation.state, 'completed_with_skips', JSON.stringify(run.operation))
        for (const sku of ['S-001', 'S-002', 'S-003', 'S-004']) assert.equal(getsById(run.strictSeen, sku), 2, `${sku} was written without its re-read`)
        for (const sku of ['L-001', 'L-002', 'L-003', 'L-004']) assert.equal(getsById(run.laxSeen, sku), 2, `${sku} was written without its re-read`)
        assert.equal(ctx.lax.parts.get('L-003')!.label, 'Relabelled meanwhile')
      }))

    test('--source probes one source and says so; the lax one found unsafe and kept as such, the strict proof left as it was', () =>
      withParts(kind, async (ctx) => {
        const first = await runWarrant(['check', 'parts', '--write-probe', 'S-002', '--source', 'strict', '--json', '--config', ctx.configFile], ctx.fx.dir)
        const firstProbes = (JSON.parse(first.stdout) as { guarantees: { name: string; status: string }[] }).guarantees.filter((g) => g.name.startsWith('write_probe'))
        assert.deepEqual(firstProbes.map((g) => [g.name, g.status]), [['write_probe.delist@strict', 'holds']], first.stdout + first.stderr)
        assert.equal(patches(ctx.lax.server.seen), 0, 'nothing was written to the lax source')

        const second = await runWarrant(['check', 'parts', '--write-probe', 'L-002', '--source', 'lax', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(second.code, 6, second.stdout + second.stderr)
        assert.match(second.stdout, /write_probe\.delist@lax\s+UNSAFE/)
        const db = ctx.fx.gateway.store.db
        assert.equal((await readVersionProof(db, 'parts', 'delist', 'strict'))?.status, 'holds')
        assert.equal((await readVersionProof(db, 'parts', 'delist', 'lax'))?.status, 'unsafe')
        assert.equal((await readVersionProof(db, 'parts', 'delist', 'lax'))?.record_id, 'L-002')
      }))

    test('--write-probe with no id probes each source on the first record its own first page lists: strict holds, lax unsafe, each kept on its record', () =>
      withParts(kind, async (ctx) => {
        const check = await runWarrant(['check', 'parts', '--write-probe', '--json', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(check.code, 6, check.stdout + check.stderr)
        const probes = (JSON.parse(check.stdout) as { guarantees: { name: string; status: string; source?: string; record_id?: string }[] }).guarantees.filter((g) => g.name.startsWith('write_probe'))
        assert.deepEqual(
          probes.map((g) => [g.name, g.status, g.record_id]),
          [
            ['write_probe.delist@strict', 'holds', 'S-001'],
            ['write_probe.delist@lax', 'unsafe', 'L-001'],
          ],
          check.stdout + check.stderr,
        )
        const db = ctx.fx.gateway.store.db
        assert.deepEqual([(await readVersionProof(db, 'parts', 'delist', 'strict'))?.record_id, (await readVersionProof(db, 'parts', 'delist', 'lax'))?.record_id], ['S-001', 'L-001'])
        // the probe wrote the values already there: nothing changed on either source
        assert.deepEqual([ctx.strict.parts.get('S-001')!.state, ctx.lax.parts.get('L-001')!.state], ['listed', 'listed'])
      }))

    test('--write-probe SOURCE=ID names one source\'s record, the other sampled; a source that lists no record is unknown, saying so, its proof untouched', () =>
      withParts(kind, async (ctx) => {
        const named = await runWarrant(['check', 'parts', '--write-probe', 'lax=L-003', '--write-probe', 'strict=S-004', '--json', '--config', ctx.configFile], ctx.fx.dir)
        const probesOf = (out: string) => (JSON.parse(out) as { guarantees: { name: string; status: string; record_id?: string; detail: string }[] }).guarantees.filter((g) => g.name.startsWith('write_probe'))
        assert.deepEqual(
          probesOf(named.stdout).map((g) => [g.name, g.status, g.record_id]),
          [
            ['write_probe.delist@strict', 'holds', 'S-004'],
            ['write_probe.delist@lax', 'unsafe', 'L-003'],
          ],
          named.stdout + named.stderr,
        )
        assert.equal(getsById(ctx.lax.server.seen, 'L-001'), 0, 'lax was probed on the record named, not a sampled one')

        ctx.lax.parts.clear()
        const empty = await runWarrant(['check', 'parts', '--write-probe', 'strict=S-002', '--json', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(empty.code, 4, empty.stdout + empty.stderr)
        const probes = probesOf(empty.stdout)
        assert.deepEqual(probes.map((g) => [g.name, g.status, g.record_id]), [['write_probe.delist@strict', 'holds', 'S-002'], ['write_probe@lax', 'unknown', undefined]])
        assert.match(probes[1]!.detail, /first page lists no record/)
        assert.equal((await readVersionProof(ctx.fx.gateway.store.db, 'parts', 'delist', 'lax'))?.record_id, 'L-003', 'the lax proof is the one its last probe kept')
      }))

    test('a probe whose record is not found (404 on the read, or gone before the write) proves nothing now: unknown, saying so; the earlier proof stands, its time not refreshed', () =>
      withParts(kind, async (ctx) => {
        const db = ctx.fx.gateway.store.db
        const first = await runWarrant(['check', 'parts', '--write-probe', 'strict=S-001', '--source', 'strict', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(first.code, 0, first.stdout + first.stderr)
        const proof = await readVersionProof(db, 'parts', 'delist', 'strict')
        assert.equal(proof?.status, 'holds')
        const probesOf = (out: string) => (JSON.parse(out) as { guarantees: { name: string; status: string; detail: string }[] }).guarantees.filter((g) => g.name.startsWith('write_probe'))

        ctx.strict.parts.delete('S-002')
        const unread = await runWarrant(['check', 'parts', '--write-probe', 'S-002', '--source', 'strict', '--json', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(unread.code, 4, unread.stdout + unread.stderr)
        assert.deepEqual(probesOf(unread.stdout).map((g) => [g.name, g.status]), [['write_probe@strict', 'unknown']])
        assert.match(probesOf(unread.stdout)[0]!.detail, /S-002.*earlier probe/)
        assert.deepEqual(await readVersionProof(db, 'parts', 'delist', 'strict'), proof, 'the earlier proof stands as it was')

        // read, then deleted by someone else before the probe's write arrives: the write is answered 404
        ctx.strict.beforePatch = (sku) => void ctx.strict.parts.delete(sku)
        const gone = await runWarrant(['check', 'parts', '--write-probe', 'strict=S-003', '--source', 'strict', '--json', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(gone.code, 4, gone.stdout + gone.stderr + JSON.stringify(probesOf(gone.stdout)))
        const probes = probesOf(gone.stdout)
        assert.deepEqual(probes.map((g) => [g.name, g.status]), [['write_probe.delist@strict', 'unknown']], gone.stdout)
        assert.match(probes[0]!.detail, /earlier probe/)
        assert.deepEqual(await readVersionProof(db, 'parts', 'delist', 'strict'), proof, 'the earlier proof stands as it was, its time not refreshed')
      }))

    test('a gateway start removes the proofs that vouch for nothing: too old, or of a resource, action or source no longer declared; a source declared again starts without one', () =>
      withParts(kind, async (ctx) => {
        const db = ctx.fx.gateway.store.db
        const config = ctx.fx.gateway.catalogue.get('parts').config
        const digest = versionProofDigest(config.connector, config.actions.delist)
        const proof = { resource: 'parts', action: 'delist', digest, source: 'strict', status: 'holds' as const, record_id: 'S-001', probed_at: new Date().toISOString(), detail: 'seeded' }
        const old = new Date(Date.now() - VERSION_PROOF_MAX_AGE_MS - 60_000).toISOString()
        await recordVersionProof(db, proof)
        await recordVersionProof(db, { ...proof, source: 'lax', probed_at: old })
        await recordVersionProof(db, { ...proof, source: 'eu-west' })
        await recordVersionProof(db, { ...proof, action: 'retire' })
        await recordVersionProof(db, { ...proof, resource: 'gone-parts' })
        await db.insertInto('kv').values([{ key: 'version_proof:unreadable', value: 'not json' }, { key: 'elsewhere', value: '{}' }]).execute()
        const keys = async () => (await db.selectFrom('kv').select('key').where('key', 'in', ['elsewhere', 'version_proof:unreadable']).execute()).length + (await versionProofRows(ctx.fx))

        const check = await runWarrant(['check', 'parts', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(check.stderr.includes('Error'), false, check.stderr)
        assert.deepEqual(await readVersionProof(db, 'parts', 'delist', 'strict'), proof, 'a proof that vouches stays')
        for (const [action, source] of [['delist', 'lax'], ['delist', 'eu-west'], ['retire', 'strict']]) assert.equal(await readVersionProof(db, 'parts', action!, source), null, `${action}@${source} was kept`)
        assert.equal(await readVersionProof(db, 'gone-parts', 'delist', 'strict'), null)
        assert.equal(await keys(), 4, 'the row that is no proof, and the key of another concept, are left alone')

        // lax dropped from the config, its fresh proof goes at the next start; declared again at another address, no
        // proof vouches for it (and an old one would not either: the digest binds every source's address)
        await recordVersionProof(db, { ...proof, source: 'lax' })
        const raw = JSON.parse(readFileSync(ctx.configFile, 'utf8')) as { resources: { parts: { connector: { sources: { name: string; base_url: string }[] } } } }
        raw.resources.parts.connector.sources = raw.resources.parts.connector.sources.filter((s) => s.name !== 'lax')
        writeFileSync(ctx.configFile, JSON.stringify(raw))
        await runWarrant(['check', 'parts', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(await readVersionProof(db, 'parts', 'delist', 'lax'), null, 'a proof of a source no longer declared was kept')
        const moved = structuredClone(config.connector) as { sources: { name: string; base_url: string }[] }
        moved.sources = moved.sources.map((s) => (s.name === 'lax' ? { ...s, base_url: ctx.strict.server.origin } : s))
        assert.equal(vouches({ ...proof, source: 'lax' }, versionProofDigest(moved, config.actions.delist), Date.now()), false)
      }))

    test('--write-probe SOURCE=ID naming a source the config does not declare: refused before anything is read, exit 2, nothing kept', () =>
      withParts(kind, async (ctx) => {
        const seenBefore = ctx.strict.server.seen.length + ctx.lax.server.seen.length
        const check = await runWarrant(['check', 'parts', '--write-probe', 'strict=S-001', '--write-probe', 'eu=E-1', '--config', ctx.configFile], ctx.fx.dir)
        assert.equal(check.code, 2, check.stdout + check.stderr)
        assert.match(check.stderr, /declares no source "eu"; its sources: strict, lax/, check.stderr)
        assert.equal(ctx.strict.server.seen.length + ctx.lax.server.seen.length, seenBefore, 'no request reached either upstream')
        assert.equal(await versionProofRows(ctx.fx), 0)
      }))

    test('--source naming a source the config does not declare: refused, naming the sources; nothing sent, nothing kept', () =>
      withParts(kind, async (ctx) => {
        const seenBefore = ctx.strict.server.seen.length + ctx.lax.server.seen.length
        const check = await runWarrant(['check', 'parts', '--write-probe', 'S-001', '--source', 'eu-west', '--config', ctx.configFile], ctx.fx.dir)
        assert.notEqual(check.code, 0)
        assert.match(check.stderr, /declares no source "eu-west"; its sources: strict, lax/, check.stderr)
        assert.equal(ctx.strict.server.seen.length + ctx.lax.server.seen.length, seenBefore, 'no request reached either upstream')
        assert.equal(await versionProofRows(ctx.fx), 0)
      }))
  })
}
