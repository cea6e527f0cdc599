import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { docsResourceConfig, startDocsUpstream } from './support/docs-upstream.js'

const LEAK = /sk-\d+-do-not-leak/

/** How the proxy refuses a PUT, echoing the document it received. */
type Refusal = (received: string) => { readonly status: number; readonly contentType: string; readonly text: string }

/** A 422 validation error quoting the received document as JSON (a common shape). */
const jsonEcho: Refusal = (received) => ({ status: 422, contentType: 'application/json', text: JSON.stringify({ error: 'validation_failed', received: JSON.parse(received) }) })
/** A plain-text refusal quoting the received body verbatim: no key says which value is denied. */
const textEcho: Refusal = (received) => ({ status: 400, contentType: 'text/plain', text: `bad document ${received}` })

/** A proxy in front of the docs API: every PUT is refused by `refuse`, everything else passes through. */
async function startRefusingProxy(target: string, refuse: Refusal): Promise<{ readonly origin: string; readonly server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8')
      if (req.method === 'PUT') {
        const { status, contentType, text } = refuse(body)
        res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) })
        return res.end(text)
      }
      const answer = await fetch(`${target}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' }, ...(body ? { body } : {}) })
      const text = await answer.text()
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      const etag = answer.headers.get('etag')
      if (etag) headers.etag = etag
      res.writeHead(answer.status, headers)
      res.end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

/**
 * `denied_fields` "never leave the gateway". A replacing write sends the whole record (denied `secret`
 * included) upstream; an upstream that refuses it echoing what it received has its body quoted into the
 * target's error message, which the agent reads back (HTTP results, MCP get_operation) and the ledger keeps.
 */
for (const kind of STORE_KINDS) {
  describe(`a denied field echoed in an upstream error body (${kind} store)`, () => {
    for (const [name, refuse, status] of [
      ['a JSON 422 quoting the received document', jsonEcho, 422],
      ['a plain-text 400 quoting the received body', textEcho, 400],
    ] as const) {
      test(`${name}: the value never reaches the agent, the ledger or the audit log`, { timeout: 60_000 }, async () => {
        const upstream = await startDocsUpstream(3)
        const proxy = await startRefusingProxy(upstream.origin, refuse)
        const fx = await startDemoGateway({
          store: kind,
          count: 20,
          edit: (raw) => {
            raw.resources.docs = docsResourceConfig(proxy.origin, { style: 'replace', path: '/docs/{id}', version: { in: 'body', path: '_rev' }, new_version: { from: 'body', path: 'rev' } })
            raw.execution = { concurrency: 1, batch_size: 5 }
          },
        })
        try {
          const token = (await fx.gateway.principals.issue({ name: 'docs-agent', role: 'agent', scopes: { resources: ['docs'], actions: ['set_status'] } })).token
          const agent = caller(fx.base, token)
          const action = { type: 'set_status', status: 'paused' }
          const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'docs', { filter: { status: 'active' } }, action)
          const commit = await agent('POST', '/v1/resources/docs/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'k1' })
          assert.equal(commit.status, 202, JSON.stringify(commit.body))
          const operation = await waitForOperation(agent, commit.body.operation_id)
          const results = await allResults(agent, operation.operation_id)
          assert.equal(results.length, 3)
          for (const r of results) {
            assert.equal(r.upstream_status, status, JSON.stringify(r))
            // still the upstream's words, with the denied value replaced, never silence
            assert.match(r.error, new RegExp(`rejected the write with ${status}: .*\\[redacted\\]`), r.error)
          }
          // the echo carried the whole record: the rest of it is still quoted
          if (refuse === jsonEcho) assert.match(results[0].error, /"secret":"\[redacted\]"/)

          const client = new Client({ name: 'denied-echo-test', version: '1.0.0' })
          await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }))
          const mcp = await client.callTool({ name: 'get_operation', arguments: { operation_id: operation.operation_id, part: 'results' } })
          await client.close()
          assert.match(JSON.stringify(mcp), /rejected the write with/)

          await fx.gateway.audit.flush()
          const audit = await fx.gateway.store.db.selectFrom('audit_events').select(['summary', 'details']).execute()
          const ledger = await fx.gateway.store.db.selectFrom('operation_targets').selectAll().execute()
          const leaks = {
            operation: LEAK.test(JSON.stringify(operation)),
            results: LEAK.test(JSON.stringify(results)),
            mcp: LEAK.test(JSON.stringify(mcp)),
            audit: LEAK.test(JSON.stringify(audit)),
            ledger: LEAK.test(JSON.stringify(ledger)),
          }
          assert.deepEqual(leaks, { operation: false, results: false, mcp: false, audit: false, ledger: false }, `the denied field's value left the gateway: ${JSON.stringify(results[0])}`)
        } finally {
          await fx.close()
          await new Promise<void>((resolve) => proxy.server.close(() => resolve()))
          await upstream.close()
        }
      })
    }
  })
}
