import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { configProblems, httpResourceInput, parseConfigInput } from '../support/config-input.js'

// The gateway holds the upstream's credential and reads what agents act on. Over plain http to a host off this
// machine, the credential and every record cross the network readable, and anything on the path can cut a page
// or change a record (the walk would call it complete). Loopback is this machine; anything else is refused at
// load unless the config says, on that source or webhook, that the network between them is the operator's own.

function withHttpResource(baseUrl: string, extra: Record<string, unknown> = {}): any {
  const raw = parseConfigInput()
  raw.resources.crm = httpResourceInput(baseUrl)
  Object.assign(raw.resources.crm.connector.sources[0], extra)
  raw.resources.crm.connector.credential = { header: 'Authorization', scheme: 'Bearer', secret: { env: 'CRM_TOKEN' } }
  return raw
}

function withWebhook(url: string, extra: Record<string, unknown> = {}): any {
  const raw = parseConfigInput()
  raw.notifications = { webhooks: [{ url, secret: { env: 'HOOK_SECRET' }, ...extra }] }
  return raw
}

const parse = (raw: unknown) => parseConfig(raw)

describe('plain http off this machine is refused unless the config says the network is its own', () => {
  for (const url of ['http://api.internal:8080/', 'http://10.0.0.7/', 'http://[2001:db8::1]/', 'HTTP://crm.example.com/'])
    test(`an upstream source at ${url}: refused, naming the source and plain_http`, () => {
      const [problem] = configProblems(() => parse(withHttpResource(url)))
      assert.equal(problem?.key, 'resources.crm.connector.sources.0.base_url')
      assert.match(problem!.message, /plain http/)
      assert.match(problem!.message, /plain_http: true/)
    })

  for (const url of ['http://127.0.0.1:9/', 'http://localhost:9/', 'http://[::1]:9/', 'http://127.8.9.10/', 'https://crm.example.com/'])
    test(`an upstream source at ${url}: accepted`, () => {
      assert.doesNotThrow(() => parse(withHttpResource(url)))
    })

  test('plain_http: true on the source accepts it', () => {
    assert.doesNotThrow(() => parse(withHttpResource('http://api.internal:8080/', { plain_http: true })))
  })

  test('a webhook at plain http off this machine: refused, naming it; plain_http: true or loopback or https accepted', () => {
    const [problem] = configProblems(() => parse(withWebhook('http://hooks.internal/warrant')))
    assert.equal(problem?.key, 'notifications.webhooks.0.url')
    assert.match(problem!.message, /plain_http: true/)
    assert.doesNotThrow(() => parse(withWebhook('http://hooks.internal/warrant', { plain_http: true })))
    assert.doesNotThrow(() => parse(withWebhook('http://127.0.0.1:9/hook')))
    assert.doesNotThrow(() => parse(withWebhook('https://hooks.internal/warrant')))
  })
})
