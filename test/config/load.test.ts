import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { loadConfigFile, parseConfig } from '../../src/config/index.js'
import { WarrantError } from '../../src/contract/index.js'
import { createTempDir } from '../support/stores.js'
import { DEMO_CONFIG_PATH, parseConfigInput, problemKeys } from '../support/config-input.js'

const demoPath = DEMO_CONFIG_PATH

describe('config', () => {
  let dir: Awaited<ReturnType<typeof createTempDir>>
  before(async () => {
    dir = await createTempDir('warrant-config-')
  })
  after(async () => {
    await dir?.drop()
  })

  test('the bundled demo config is valid and resolves its sqlite paths against its own folder', () => {
    const config = loadConfigFile(demoPath)
    const subs = config.resources.subscriptions!
    assert.equal(subs.connector.kind, 'sql')
    assert.ok(subs.connector.kind === 'sql' && subs.connector.url.startsWith('sqlite:/'))
    assert.deepEqual(subs.denied_fields, ['card_token', 'notes'])
  })

  test('a bad file names each key and what was expected', () => {
    const base = () => structuredClone(parseConfigInput())
    const wrongType = base()
    wrongType.resources.subscriptions.review_fields = 'id'
    assert.deepEqual(problemKeys(() => parseConfig(wrongType)), ['resources.subscriptions.review_fields'])

    const reviewedAndDenied = base()
    reviewedAndDenied.resources.subscriptions.review_fields.push('card_token')
    assert.ok(problemKeys(() => parseConfig(reviewedAndDenied)).some((k) => k.startsWith('resources.subscriptions.review_fields')))

    const unknownField = base()
    unknownField.resources.subscriptions.actions.pause_collection.set.colour = 'red'
    assert.deepEqual(problemKeys(() => parseConfig(unknownField)), ['resources.subscriptions.actions.pause_collection.set.colour'])

    const unknownKey = base()
    unknownKey.resources.subscriptions.colour = 'red'
    assert.deepEqual(problemKeys(() => parseConfig(unknownKey)), ['resources.subscriptions.colour'])

    const badConnector = base()
    badConnector.resources.subscriptions.connector = { kind: 'ftp' }
    assert.deepEqual(problemKeys(() => parseConfig(badConnector)), ['resources.subscriptions.connector.kind'])
  })

  test('a "__proto__" key anywhere in a file is refused, naming it (the schema would drop it without a word)', () => {
    const raw = readFileSync(demoPath, 'utf8')
    const yamlFile = join(dir.path, 'proto.yaml')
    // a field declared under that name, in YAML as a person writes it
    writeFileSync(yamlFile, raw.replace(/^(\s+)fields:\n/m, (line, indent: string) => `${line}${indent}  __proto__: string\n`))
    assert.ok(readFileSync(yamlFile, 'utf8').includes('__proto__: string'), 'the test file declares the field')
    assert.throws(() => loadConfigFile(yamlFile), (error: unknown) => {
      assert.ok(error instanceof WarrantError)
      assert.equal(error.code, 'invalid_request')
      const keys = (error.details as { problems: { key: string }[] }).problems.map((p) => p.key)
      assert.deepEqual(keys, ['resources.subscriptions.fields.__proto__'])
      assert.match(error.message, /__proto__: a reserved name/)
      return true
    })
    // in JSON, and somewhere no field is declared
    const jsonFile = join(dir.path, 'proto.json')
    const config = parseConfigInput()
    writeFileSync(jsonFile, JSON.stringify(config).replace('"review_fields"', '"__proto__":{"x":1},"review_fields"'))
    // named once, though a strict object does not know it either
    assert.deepEqual(problemKeys(() => loadConfigFile(jsonFile)), ['resources.subscriptions.__proto__'])
    // the same file without it loads
    writeFileSync(jsonFile, JSON.stringify(config))
    assert.equal(loadConfigFile(jsonFile).resources.subscriptions!.connector.kind, 'sql')
  })

  test("a precondition, selector, exclusion rule or flag whose condition does not fit its field's type is refused by name", () => {
    // in memory a condition of another type never holds: a precondition that skipped every target, a flag that flagged none
    const base = () => structuredClone(parseConfigInput())
    const cases: [string, (raw: any) => void, string, RegExp][] = [
      ['precondition', (raw) => (raw.resources.subscriptions.actions.pause_collection.precondition.amount_due = { gte: '100' }), 'resources.subscriptions.actions.pause_collection.precondition.amount_due', /value "100" is not a number/],
      ['selector', (raw) => (raw.resources.subscriptions.standing_approvals[0].selector.status = 3), 'resources.subscriptions.standing_approvals.0.selector.status', /value 3 is not a string/],
      ['exclude', (raw) => (raw.resources.subscriptions.standing_approvals[0].exclude[0].filter = { tags: 'enterprise' }), 'resources.subscriptions.standing_approvals.0.exclude.0.filter.tags', /tags field supports only "contains"/],
      ['flagged', (raw) => (raw.resources.subscriptions.standing_approvals[0].flagged = { amount_due: { contains: 'x' } }), 'resources.subscriptions.standing_approvals.0.flagged.amount_due', /"contains" applies to tags fields/],
      ['flagged', (raw) => (raw.resources.subscriptions.standing_approvals[0].flagged = { amount_due: { gte: 1.5 }, version: { gt: 1.5 } }), 'resources.subscriptions.standing_approvals.0.flagged.version', /value 1.5 is not an integer/],
    ]
    for (const [what, edit, key, message] of cases) {
      const raw = base()
      edit(raw)
      assert.deepEqual(problemKeys(() => parseConfig(raw)), [key], what)
      assert.throws(() => parseConfig(raw), (error: unknown) => message.test((error as WarrantError).message), what)
    }
    // the same filters, fitting their types, load
    const fitting = base()
    fitting.resources.subscriptions.actions.pause_collection.precondition.amount_due = { gte: 100 }
    fitting.resources.subscriptions.standing_approvals[0].flagged = { amount_due: { gte: 1e6 }, tags: { contains: 'legal_hold' } }
    assert.deepEqual(parseConfig(fitting).resources.subscriptions!.actions.pause_collection!.precondition.amount_due, { gte: 100 })
  })

  test('write_window: a sql resource may size its window statements; out of range, or on MySQL, it is refused by name', () => {
    const base = () => structuredClone(parseConfigInput())
    const sized = base()
    sized.resources.subscriptions.connector.write_window = 64
    const parsed = parseConfig(sized).resources.subscriptions!.connector
    assert.ok(parsed.kind === 'sql' && parsed.write_window === 64)
    const unset = parseConfig(base()).resources.subscriptions!.connector
    assert.ok(unset.kind === 'sql' && unset.write_window === undefined, 'no default: the executor falls back to the concurrency')
    for (const wrong of [0, 1001, 2.5, '64']) {
      const bad = base()
      bad.resources.subscriptions.connector.write_window = wrong
      assert.deepEqual(problemKeys(() => parseConfig(bad)), ['resources.subscriptions.connector.write_window'], `write_window ${JSON.stringify(wrong)}`)
    }
    // MySQL writes one target at a time: a window there would be a setting that does nothing
    const mysql = base()
    mysql.resources.subscriptions.connector = { ...mysql.resources.subscriptions.connector, url: 'mysql://root@127.0.0.1:3306/billing', write_window: 64 }
    assert.throws(
      () => parseConfig(mysql),
      (error: unknown) => error instanceof WarrantError && /one target at a time/.test(JSON.stringify(error.details)) && problemKeys(() => parseConfig(mysql)).join() === 'resources.subscriptions.connector.write_window',
    )
    delete mysql.resources.subscriptions.connector.write_window
    assert.equal(parseConfig(mysql).resources.subscriptions!.connector.kind, 'sql')
  })

  test('statement_timeout_ms: a sql resource may set its lock and statement time limit; 0, negative, fractional or absurd is refused by name', () => {
    const base = () => structuredClone(parseConfigInput())
    const set = base()
    set.resources.subscriptions.connector.statement_timeout_ms = 2_000
    const parsed = parseConfig(set).resources.subscriptions!.connector
    assert.ok(parsed.kind === 'sql' && parsed.statement_timeout_ms === 2_000)
    const unset = parseConfig(base()).resources.subscriptions!.connector
    assert.ok(unset.kind === 'sql' && unset.statement_timeout_ms === undefined, 'no value: each dialect keeps its own default (30 s, SQLite 5 s)')
    for (const wrong of [0, -1, 999, 1500.5, 3_600_001, 1e12, '2000']) {
      const bad = base()
      bad.resources.subscriptions.connector.statement_timeout_ms = wrong
      assert.deepEqual(problemKeys(() => parseConfig(bad)), ['resources.subscriptions.connector.statement_timeout_ms'], `statement_timeout_ms ${JSON.stringify(wrong)}`)
    }
    // SQLite waits for a lock synchronously, the event loop blocked with it: at most 30 s there
    const sqlite = base()
    sqlite.resources.subscriptions.connector.statement_timeout_ms = 60_000
    assert.deepEqual(problemKeys(() => parseConfig(sqlite)), ['resources.subscriptions.connector.statement_timeout_ms'])
    const server = base()
    server.resources.subscriptions.connector = { ...server.resources.subscriptions.connector, url: 'postgres://postgres@127.0.0.1:5432/billing', statement_timeout_ms: 60_000 }
    const serverParsed = parseConfig(server).resources.subscriptions!.connector
    assert.ok(serverParsed.kind === 'sql' && serverParsed.statement_timeout_ms === 60_000)
  })

  test('an unreadable or malformed file is a clear error, not a crash', () => {
    const broken = join(dir.path, 'broken.yaml')
    writeFileSync(broken, 'resources: [unclosed')
    assert.throws(() => loadConfigFile(broken), /not valid YAML/)
    assert.throws(() => loadConfigFile(join(dir.path, 'missing.yaml')), /cannot read config file/)
    const badJson = join(dir.path, 'bad.json')
    writeFileSync(badJson, '{"resources": ')
    assert.throws(() => loadConfigFile(badJson), /not valid JSON/)
  })

  /**
   * A config number the parser reads as another value: 9007199254740993 became 9007199254740992, 1e-400 zero and
   * 12345678901234567.89 …68 without a word, so a precondition (or a value an action sets, a standing approval's
   * selector) held another number than the one the operator wrote; `.inf` and 1e400 were refused as "Invalid
   * input". Each is now refused naming its key, the literal and the value it would be.
   */
  test('a number the YAML or JSON parser would read as another value is refused by key, saying what it would be read as', () => {
    const demo = readFileSync(demoPath, 'utf8')
    const precondition = 'precondition: { status: past_due, collection: active }'
    assert.ok(demo.includes(precondition))
    const file = join(dir.path, 'numbers.yaml')
    const cases = [
      ['9007199254740993', '9007199254740992'],
      ['12345678901234567.89', '12345678901234568'],
      ['1e-400', '0'],
      ['1e400', 'Infinity'],
      ['-.inf', '-Infinity'],
      ['.nan', 'NaN'],
    ]
    for (const [literal, readAs] of cases) {
      writeFileSync(file, demo.replace(precondition, `precondition: { status: past_due, collection: active, amount_due: { gte: ${literal} } }`))
      assert.deepEqual(problemKeys(() => loadConfigFile(file)), ['resources.subscriptions.actions.pause_collection.precondition.amount_due.gte'], literal)
      assert.throws(() => loadConfigFile(file), (e: Error) => e.message.includes(`the number ${literal} is not one a JSON number (a double) holds exactly; it would be read as ${readAs}`))
    }
    // JSON, in a value an action sets; digits a double holds load
    const json = join(dir.path, 'numbers.json')
    const config = JSON.stringify(parseConfigInput())
    writeFileSync(json, config.replace('"collection":"paused"', '"collection":"paused","amount_due":9007199254740993'))
    assert.deepEqual(problemKeys(() => loadConfigFile(json)), ['resources.subscriptions.actions.pause_collection.set.amount_due'])
    writeFileSync(json, config.replace('"collection":"paused"', '"collection":"paused","amount_due":9007199254740991'))
    assert.equal(loadConfigFile(json).resources.subscriptions!.actions.pause_collection!.set.amount_due, 9007199254740991)
  })
})
