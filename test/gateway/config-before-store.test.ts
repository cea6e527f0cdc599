import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import pg from 'pg'
import { createCliWorkspaceOn, httpResourceWithSecret } from '../support/cli-config.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A config that cannot run is refused before the store is touched: `warrant serve` against a fresh store
 * exits 2 naming the key, and the store has no file (SQLite), no table (PostgreSQL), and no audit key file was
 * written beside it. Was: the store was created and migrated (and the key file written) first, so a wrong
 * config had already changed things by the time it was refused: for a missing secret, and (still after secrets
 * were read first) for every error a connector finds when it is built. Each names the full dotted key from the
 * config file's root, as the schema's messages do (was: `resources.crm: source "main" is declared twice`, the
 * resource and no key; `http connector: get.path …`, a key without the resource's path to it).
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
  // what the connectors find when they are built
  [
    'an http base_url at a metadata address',
    (raw) => (raw.resources.crm = httpResource((c) => Object.assign(c.sources[0], { base_url: 'http://169.254.169.254/latest/', plain_http: true }))),
    /resources\.crm\.connector\.sources\[0\]\.base_url: points to a link-local or metadata address .*\(source "main"\)/,
  ],
  ['an http base_url that is not http', (raw) => (raw.resources.crm = httpResource((c) => (c.sources[0].base_url = 'ftp://127.0.0.1/'))), /resources\.crm\.connector\.sources\[0\]\.base_url: must be http or https, not ftp: \(source "main"\)/],
  ['an http source declared twice', (raw) => (raw.resources.crm = httpResource((c) => c.sources.push({ ...c.sources[0] }))), /resources\.crm\.connector\.sources\[1\]\.name: source "main" is declared twice/],
  ['an http get.path without {id}', (raw) => (raw.resources.crm = httpResource((c) => (c.get.path = '/items'))), /resources\.crm\.connector\.get\.path: \/items must contain \{id\}/],
  ['an http list.path leaving the base URL', (raw) => (raw.resources.crm = httpResource((c) => (c.list.path = '/a/../items'))), /resources\.crm\.connector\.list\.path: \/a\/\.\.\/items: upstream path refused: it contains a dot segment/],
  [
    'a sql id_field of a type no id has',
    (raw) => {
      raw.resources.subscriptions.fields.archived = 'boolean'
      raw.resources.subscriptions.id_field = 'archived'
      raw.resources.subscriptions.review_fields.push('archived')
    },
    /resources\.subscriptions\.id_field: "archived" is a boolean field; an id is a string or a number/,
  ],
  ['a sql URL of an unknown scheme', (raw) => (raw.resources.subscriptions.connector.url = 'oracle://127.0.0.1:9/crm'), /resources\.subscriptions\.connector\.url: sql connector URL "oracle:\/\/127\.0\.0\.1:9\/crm" has an unsupported scheme/],
  ['a sqlite URL naming a host', (raw) => (raw.resources.subscriptions.connector.url = 'sqlite://db-host/billing.db'), /resources\.subscriptions\.connector\.url: sql connector URL "sqlite:\/\/db-host\/billing\.db" names a host/],
  [
    'a postgres upstream off this machine without TLS',
    (raw) => (raw.resources.subscriptions.connector.url = 'postgres://app@db.internal:5432/billing'),
    /resources\.subscriptions\.connector\.url: reaches the database at "db\.internal", off this machine, without TLS/,
  ],
  [
    'a mysql upstream off this machine without TLS',
    (raw) => (raw.resources.subscriptions.connector.url = 'mysql://app@db.internal/billing?ssl-mode=DISABLED'),
    /resources\.subscriptions\.connector\.url: reaches the database at "db\.internal", off this machine, without TLS/,
  ],
  ['a mysql URL naming no database', (raw) => (raw.resources.subscriptions.connector.url = 'mysql://root@127.0.0.1:9/'), /resources\.subscriptions\.connector\.url: sql connector URL "mysql:\/\/root@127\.0\.0\.1:9\/" does not name one database/],
  [
    'a sql version_field of a type no version has',
    (raw) => {
      raw.resources.subscriptions.fields.archived = 'boolean'
      raw.resources.subscriptions.version_field = 'archived'
    },
    /resources\.subscriptions\.version_field: "archived" is a boolean field/,
  ],
]

/** An http resource on a port nothing listens on, `edit` applied to its connector. */
function httpResource(edit: (connector: Record<string, any>) => void): Record<string, any> {
  const resource = httpResourceWithSecret('WARRANT_TEST_CRM_TOKEN') as Record<string, any>
  delete resource.connector.credential
  edit(resource.connector)
  return resource
}

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
  describe(`a config that cannot run leaves a fresh store untouched (${kind})`, () => {
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
