import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCliWorkspaceOn } from '../support/cli-config.js'
import { STORE_KINDS } from '../support/stores.js'
import { startServe, stopServe } from '../operations/support/serve-process.js'

/**
 * An upstream that cannot be reached when `warrant serve` starts is not a config error: serve starts (its
 * connectors are built before the store, and building connects nothing), and each request answers for the
 * upstream as it finds it: a search is `partial` with `SOURCE_UNAVAILABLE` naming the source, a read by id is 502
 * `upstream_unavailable`. One upstream down takes neither the process nor the other resources with it.
 */
const DOWN: Record<string, string> = {
  pg_down: 'postgres://postgres@127.0.0.1:9/nowhere',
  mysql_down: 'mysql://root@127.0.0.1:9/nowhere',
  sqlite_missing: 'sqlite:./no-such-upstream.db',
}

for (const kind of STORE_KINDS)
  describe(`serve with an unreachable sql upstream at start (${kind} store)`, () => {
    it('starts, answers each request for the upstream as it is, and keeps serving the others', { timeout: 120_000 }, async () => {
      const ws = await createCliWorkspaceOn(kind, {
        count: 5,
        edit: (raw) => {
          for (const [name, url] of Object.entries(DOWN)) {
            raw.resources[name] = structuredClone(raw.resources.subscriptions)
            raw.resources[name].connector.url = url
            raw.resources[name].standing_approvals = []
          }
        },
      })
      const { child, base } = await startServe(ws.configPath)
      try {
        const created = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'bot', '--json'])
        assert.equal(created.code, 0, created.stderr)
        const token = (JSON.parse(created.stdout) as { token: string }).token
        const ask = async (path: string, body?: unknown) => {
          const response = await fetch(`${base}${path}`, {
            method: body === undefined ? 'GET' : 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          })
          return { status: response.status, body: (await response.json()) as Record<string, any> }
        }
        for (const name of Object.keys(DOWN)) {
          const search = await ask(`/v1/resources/${name}/search`, { filter: { status: 'past_due' }, budget: { max_pages: 1 } })
          assert.equal(search.status, 200, JSON.stringify(search.body))
          assert.equal(search.body.complete, false, name)
          assert.deepEqual(
            search.body.incomplete_reasons.map((r: { code: string }) => r.code),
            ['SOURCE_UNAVAILABLE'],
            name,
          )
          const record = await ask(`/v1/resources/${name}/records/sub_1`)
          assert.equal(record.status, 502, JSON.stringify(record.body))
          assert.equal(record.body.error.code, 'upstream_unavailable', name)
        }
        const reachable = await ask('/v1/resources/subscriptions/search', { filter: {}, budget: { max_pages: 10 } })
        assert.equal(reachable.status, 200)
        assert.equal(reachable.body.complete, true, JSON.stringify(reachable.body.incomplete_reasons))
        assert.equal(reachable.body.items.length, 5)
        assert.equal(child.exitCode, null, 'serve exited')
      } finally {
        await stopServe(child, 'SIGTERM')
        await ws.drop()
      }
    })
  })
