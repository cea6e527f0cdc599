import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { configProblems, httpResourceInput, parseConfigInput, problemKeys } from '../support/config-input.js'

// Mistakes a platform engineer makes editing the YAML by hand, each accepted before and found out only
// mid-operation (or never): every one is refused at load, naming the key and what to write instead.

describe('config mistakes refused at load', () => {
  test('an action that sets the version field is refused (the sql write overrode it with the next version; an http one sent it to the upstream)', () => {
    const sql = parseConfigInput()
    sql.resources.subscriptions.actions.pause_collection.set.version = 7
    const [problem] = configProblems(() => parseConfig(sql))
    assert.equal(problem?.key, 'resources.subscriptions.actions.pause_collection.set.version')
    assert.match(problem!.message, /version field/)

    const http = parseConfigInput()
    http.resources.crm = httpResourceInput()
    http.resources.crm.actions.close.set.rev = 3
    assert.deepEqual(problemKeys(() => parseConfig(http)), ['resources.crm.actions.close.set.rev'])
  })
})

describe('a version field that is the id field', () => {
  // A sql write moves the version column itself (id + 1, a UUID): with version_field naming the id column it renumbered
  // the record it wrote (row 1 became row 2, answered "written"), and `warrant check` said conditional_writes held.
  // An http version read from the id never moves, so every write would halt unverified. Both are refused at load.
  test('version_field, or connector.version.field, naming the id field is refused by key', () => {
    const sql = parseConfigInput()
    sql.resources.subscriptions.version_field = 'id'
    const [problem] = configProblems(() => parseConfig(sql))
    assert.equal(problem?.key, 'resources.subscriptions.version_field')
    assert.match(problem!.message, /id field/)

    const http = parseConfigInput()
    http.resources.crm = httpResourceInput()
    http.resources.crm.connector.version.field = 'id'
    assert.deepEqual(problemKeys(() => parseConfig(http)), ['resources.crm.connector.version.field'])
  })
})

describe('a sql version field that an action tests as a business value', () => {
  // A sql write moves the version column itself (to a fresh token, + 1, now): with `version_field: status` and a
  // precondition `status: past_due`, the first write set status to a UUID, answered `written`, and the executor, which
  // exempts the version from the effect check, recorded the target `succeeded`, a business value no reviewer approved
  // changing overwritten. A column an action tests is a business value, not a version: refused at load by key.
  test('a precondition on the version field of a sql resource is refused naming it', () => {
    const sql = parseConfigInput()
    sql.resources.subscriptions.version_field = 'status'
    const [problem] = configProblems(() => parseConfig(sql))
    assert.equal(problem?.key, 'resources.subscriptions.actions.pause_collection.precondition.status')
    assert.match(problem!.message, /version field/)
    assert.match(problem!.message, /every write moves it/)
  })
})

describe('a version field listed in group_by', () => {
  // A version moves on every write (a fresh token, + 1, now, or the upstream's own), so grouping by it splits the
  // records by values nobody chose; a field worth grouping by is a business value (`version_field: plan` with
  // `group_by: [plan, state]`), which a sql write would overwrite with a UUID. Refused at load, naming the entry.
  test('version_field, or connector.version.field, in group_by is refused by key, naming the fix', () => {
    const sql = parseConfigInput()
    sql.resources.subscriptions.version_field = 'region'
    const index = sql.resources.subscriptions.group_by.indexOf('region')
    assert.ok(index >= 0)
    const problems = configProblems(() => parseConfig(sql))
    const problem = problems.find((p) => p.key === `resources.subscriptions.group_by.${index}`)
    assert.ok(problem, JSON.stringify(problems))
    assert.match(problem.message, /"region" is the version field/)
    assert.match(problem.message, /remove it from group_by/)
    assert.match(problem.message, /a counter, updated_at/)

    const http = parseConfigInput()
    http.resources.crm = httpResourceInput()
    http.resources.crm.connector.version.field = 'status'
    http.resources.crm.fields.status = 'string'
    http.resources.crm.actions.close.set = { rev: 1 }
    http.resources.crm.fields.rev = 'integer'
    http.resources.crm.group_by = ['status']
    assert.deepEqual(problemKeys(() => parseConfig(http)), ['resources.crm.group_by.0'])
  })

  test('a group_by without the version field still loads', () => {
    assert.doesNotThrow(() => parseConfig(parseConfigInput()))
  })
})

describe('names and labels a reader cannot tell apart', () => {
  test('two resources, or two actions of one resource, whose names differ only in case are refused', () => {
    const resources = parseConfigInput()
    resources.resources.Subscriptions = structuredClone(resources.resources.subscriptions)
    const [problem] = configProblems(() => parseConfig(resources))
    assert.equal(problem?.key, 'resources.Subscriptions')
    assert.match(problem!.message, /"Subscriptions" differs from "subscriptions" only in case/)

    const actions = parseConfigInput()
    const subs = actions.resources.subscriptions
    subs.actions.Pause_Collection = structuredClone(subs.actions.pause_collection)
    assert.deepEqual(problemKeys(() => parseConfig(actions)), ['resources.subscriptions.actions.Pause_Collection'])
  })

  test('an environment name of only whitespace is refused: every review shows it as the one prominent label', () => {
    const raw = parseConfigInput()
    raw.resources.subscriptions.environment.name = '   '
    assert.deepEqual(problemKeys(() => parseConfig(raw)), ['resources.subscriptions.environment.name'])
  })
})

describe('durations past what a clock or timer can hold', () => {
  test('a ttl whose expiry no date can hold, a timeout node fires at once, a lease gone before renewal: each refused by key', () => {
    const cases: [string, (raw: any) => void][] = [
      // now + 1e12 minutes is no Date: creating a selection threw RangeError mid-request
      ['selection_ttl_minutes', (raw) => (raw.selection_ttl_minutes = 1e12)],
      ['resources.subscriptions.selection_ttl_minutes', (raw) => (raw.resources.subscriptions.selection_ttl_minutes = 1e12)],
      ['resources.subscriptions.approval.ttl_minutes', (raw) => (raw.resources.subscriptions.approval.ttl_minutes = 1e13)],
      // past 2^31-1 ms node runs a timer after 1 ms: every upstream call timed out at once
      ['resources.crm.connector.timeout_ms', (raw) => {
        raw.resources.crm = httpResourceInput()
        raw.resources.crm.connector.timeout_ms = 3_000_000_000
      }],
      // a lease of 0.1 ms is over before its first renewal: another executor takes the operation over mid-write
      ['execution.lease_seconds', (raw) => (raw.execution = { lease_seconds: 0.0001 })],
      ['execution.lease_seconds', (raw) => (raw.execution = { lease_seconds: 5e6 })],
    ]
    for (const [key, edit] of cases) {
      const raw = parseConfigInput()
      edit(raw)
      assert.deepEqual(problemKeys(() => parseConfig(raw)), [key], key)
    }
  })
})

describe('a credential written into the config', () => {
  /** The test config with its crm connector edited, parsed. */
  const parsedWith = (edit: (connector: any) => void) => {
    const raw = parseConfigInput()
    raw.resources.crm = httpResourceInput()
    edit(raw.resources.crm.connector)
    return parseConfig(raw)
  }
  const problemsWith = (edit: (connector: any) => void) => configProblems(() => parsedWith(edit))
  const assertCredentialRefused = (cases: readonly (readonly [string, (connector: any) => void])[]) => {
    for (const [where, edit] of cases) {
      const problems = problemsWith(edit)
      assert.deepEqual(problems.map((p) => p.key), [where])
      assert.match(problems[0]!.message, /connector\.credential/)
      assert.doesNotMatch(problems[0]!.message, /sk_live|ya29|abc123|t0k/)
    }
  }

  test('a fixed query parameter named like a credential (list.query, get.batch.query) is refused, naming connector.credential', () => {
    assertCredentialRefused([
      ['resources.crm.connector.list.query.api_key', (c) => (c.list.query = { api_key: 'sk_live_51H8' })],
      ['resources.crm.connector.list.query.access_token', (c) => (c.list.query = { include: 'owner', access_token: 'ya29.a0' })],
      ['resources.crm.connector.get.batch.query.X-Auth-Token', (c) => (c.get.batch = { path: '/items', ids_param: 'ids', query: { 'X-Auth-Token': 't0k' } })],
    ])
    // parameters that only look alike stay allowed: CouchDB's key, a filter on the author
    assert.doesNotThrow(() => parsedWith((c) => (c.list.query = { key: '"a"', author: 'x', include_docs: 'true' })))
  })

  /**
   * The same parameter written into the list path (`list.path: /items?api_key=…`) was accepted: an upstream's next
   * link echoes it (`/items?api_key=sk_live_…&page=2`), a link-paged walk's position is that URL, and the cursor
   * carrying it went to the agent and, with every continued search, into the audit log (signed, not encrypted).
   */
  test('a query parameter named like a credential in list.path or get.batch.path is refused too, never quoting its value', () => {
    assertCredentialRefused([
      ['resources.crm.connector.list.path', (c) => (c.list.path = '/items?api_key=sk_live_51H8')],
      ['resources.crm.connector.list.path', (c) => (c.list.path = '/items?include=owner&Access-Token=ya29.a0')],
      ['resources.crm.connector.get.batch.path', (c) => (c.get.batch = { path: '/items?sig=abc123', ids_param: 'ids' })],
    ])
    assert.doesNotThrow(() => parsedWith((c) => (c.list.path = '/items?key=%22a%22&include_docs=true')))
  })
})

describe('a secret written into the config', () => {
  test('a secret given as its value (a string, or an object of neither form) is refused saying what to write instead, and the value is never quoted', () => {
    for (const [secret, key] of [
      ['sk_live_51H8xyzzy', 'resources.crm.connector.credential.secret'],
      [{ value: 'sk_live_51H8xyzzy' }, 'resources.crm.connector.credential.secret'],
    ] as const) {
      const raw = parseConfigInput()
      raw.resources.crm = httpResourceInput()
      raw.resources.crm.connector.credential = { scheme: 'Bearer', secret }
      const problems = configProblems(() => parseConfig(raw))
      assert.deepEqual(problems.map((p) => p.key), [key], JSON.stringify(problems))
      assert.match(problems[0]!.message, /\{ env: [A-Z_]+ \} or \{ file: /)
      assert.doesNotMatch(JSON.stringify(problems), /sk_live/)
    }
    const raw = parseConfigInput()
    raw.audit = { key: 'k1 sk_audit_secret' }
    const problems = configProblems(() => parseConfig(raw))
    assert.deepEqual(problems.map((p) => p.key), ['audit.key'])
    assert.match(problems[0]!.message, /\{ env: NAME \} or \{ file: PATH, create: true \}/)
    assert.doesNotMatch(JSON.stringify(problems), /sk_audit/)
  })
})

describe('a key the config does not know', () => {
  test('is named with its full path and what to write instead: the key it is a slip of, the keys allowed there, or why "<<" is not read', () => {
    const typo = parseConfigInput()
    typo.execution = { concurency: 8 }
    typo.resources.subscriptions['review-fields'] = ['id']
    typo.resources.subscriptions.connector.tabel = 'x'
    assert.deepEqual(configProblems(() => parseConfig(typo)), [
      { key: 'execution.concurency', message: 'unknown key "concurency"; did you mean "concurrency"?' },
      { key: 'resources.subscriptions.connector.tabel', message: 'unknown key "tabel"; did you mean "table"?' },
      { key: 'resources.subscriptions.review-fields', message: 'unknown key "review-fields"; did you mean "review_fields"?' },
    ])

    const far = parseConfigInput()
    far.server.listen = 8080
    const [problem] = configProblems(() => parseConfig(far))
    assert.equal(problem?.key, 'server.listen')
    assert.match(problem!.message, /^unknown key "listen"; the keys here are host, port, public_url, /)

    const merge = parseConfigInput()
    merge.resources.subscriptions.approval['<<'] = { ttl_minutes: 5 }
    const [mergeProblem] = configProblems(() => parseConfig(merge))
    assert.equal(mergeProblem?.key, 'resources.subscriptions.approval.<<')
    assert.match(mergeProblem!.message, /YAML merge key .* is not read: write the keys out/)
  })
})

describe('one environment name, two accounts', () => {
  test('resources naming the same environment with different accounts are refused (a block copied from prod, half edited)', () => {
    const raw = parseConfigInput()
    raw.resources.crm = httpResourceInput()
    raw.resources.crm.environment = { name: 'billing-demo', account: '9921' }
    const [problem] = configProblems(() => parseConfig(raw))
    assert.equal(problem?.key, 'resources.crm.environment.account')
    assert.match(problem!.message, /environment "billing-demo" is account "4411" in resource "subscriptions"/)
    // another host in the same environment (a database and an API) is fine, as is an account left unsaid
    raw.resources.crm.environment = { name: 'billing-demo', host: 'api.example' }
    assert.doesNotThrow(() => parseConfig(raw))
  })
})

describe('expect.status', () => {
  test('an empty list, or a status outside 2xx, is refused: only a success reaches the check, so such a list halted after the first write', () => {
    for (const [status, key] of [
      [[], 'resources.crm.actions.close.expect.status'],
      [[200, 412], 'resources.crm.actions.close.expect.status.1'],
      [[500], 'resources.crm.actions.close.expect.status.0'],
    ] as const) {
      const raw = parseConfigInput()
      raw.resources.crm = httpResourceInput()
      raw.resources.crm.actions.close.expect = { status }
      assert.deepEqual(problemKeys(() => parseConfig(raw)), [key], JSON.stringify(status))
    }
  })
})
