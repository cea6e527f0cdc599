import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { WarrantError } from '../../src/contract/index.js'

/** The bundled demo config's path. */
export const DEMO_CONFIG_PATH = new URL('../../config/demo.yaml', import.meta.url).pathname

/** The demo config as raw data, before defaults, so each test can break one key. */
export function parseConfigInput(): any {
  return parseYaml(readFileSync(DEMO_CONFIG_PATH, 'utf8'))
}

/** A small http resource to add beside the demo's sql one. */
export function httpResourceInput(baseUrl = 'http://127.0.0.1:9/'): any {
  return {
    environment: { name: 'crm-prod' },
    connector: {
      kind: 'http',
      sources: [{ name: 'main', base_url: baseUrl }],
      list: { path: '/items', pagination: { style: 'cursor' } },
      get: { path: '/items/{id}' },
      version: { from: 'field', field: 'rev' },
    },
    fields: { id: 'string', status: 'string', rev: 'integer' },
    review_fields: ['id', 'status'],
    actions: { close: { set: { status: 'closed' }, write: { path: '/items/{id}' } } },
  }
}

/** The keys a refused config names (`fn` must throw the config's `invalid_request` error). */
export function problemKeys(fn: () => unknown): string[] {
  return configProblems(fn).map((p) => p.key)
}

/** The problems (key and message) a refused config names. */
export function configProblems(fn: () => unknown): { key: string; message: string }[] {
  try {
    fn()
  } catch (error) {
    assert.ok(error instanceof WarrantError)
    assert.equal(error.code, 'invalid_request')
    return (error.details as { problems: { key: string; message: string }[] }).problems
  }
  assert.fail('expected the config to be refused')
}
