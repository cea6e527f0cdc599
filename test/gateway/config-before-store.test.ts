import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import pg from 'pg'
import { createCliWorkspaceOn, httpResourceWithSecret } from '../support/cli-config.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A config missing a secret is refused before the store is touched: `warrant serve` against a fresh store
 * exits 2 naming the key, and the store has no file (SQLite), no table (PostgreSQL), and no audit key file was
 * written beside it. Was: the store was created and migrated (and the key file written) first, so a wrong
 * config had already changed things by the time it was refused.
 */
const cases: [string, (raw: Record<string, any>) => void, RegExp][] = [
  ['an http credential', (raw) => (raw.resources.crm = httpResourceWithSecret('WARRANT_TEST_CRM_TOKEN')), /resources\.crm\.connector\.credential\.secret: secret environment variable WARRANT_TEST_CRM_TOKEN is not set/],
  [
    'a webhook secret',
    (raw) => (raw.notifications = { webhooks: [{ url: 'http://127.0.0.1:9/hook', secret: { env: 'WARRANT_TEST_HOOK_SECRET' } }] }),
    /notifications\.webhooks\[0\]\.secret: secret environment variable WARRANT_TEST_HOOK_SECRET is not set/,
  ],
  [
    'a sql connector password',
    (raw) => {
      raw.resources.pgsubs = structuredClone(raw.resources.subscriptions)
      raw.resources.pgsubs.connector.url = 'postgres://postgres@127.0.0.1:9/nowhere'
      raw.resources.pgsubs.connector.password = { env: 'WARRANT_TEST_PG_PASSWORD' }
      raw.resources.pgsubs.standing_approvals = []
    },
    /resources\.pgsubs\.connector\.password: secret environment variable WARRANT_TEST_PG_PASSWORD is not set/,
  ],
  ['the audit key', (raw) => (raw.audit = { key: { env: 'WARRANT_TEST_AUDIT_KEY' } }), /audit key environment variable WARRANT_TEST_AUDIT_KEY is not set/],
]

async function tablesIn(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ n: string }>("select count(*) as n from information_schema.tables where table_schema = 'public'")
    return Number(rows[0]!.n)
  } finally {
    await client.end()
  }
}

for (const kind of STORE_KINDS)
  describe(`a config missing a secret leaves a fresh store untouched (${kind})`, () => {
    for (const [name, edit, refusal] of cases)
      it(`${name}: serve exits 2 naming it; no store, no migration, no key file`, async () => {
        const ws = await createCliWorkspaceOn(kind, { count: 5, edit })
        try {
          const result = await ws.warrantWith(['serve', '--port', '0'], { WARRANT_TEST_CRM_TOKEN: undefined, WARRANT_TEST_HOOK_SECRET: undefined, WARRANT_TEST_PG_PASSWORD: undefined, WARRANT_TEST_AUDIT_KEY: undefined })
          assert.equal(result.code, 2, result.stderr)
          assert.match(result.stderr.trim(), refusal)
          if (kind === 'sqlite') assert.equal(existsSync(join(ws.dir, 'warrant.db')), false, 'the store file was created')
          else assert.equal(await tablesIn(ws.storeUrl), 0, 'the store was migrated')
          assert.equal(existsSync(join(ws.dir, 'audit.key')), false, 'the audit key file was written')
        } finally {
          await ws.drop()
        }
      })
  })
