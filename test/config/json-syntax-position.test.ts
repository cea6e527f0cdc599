import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { loadConfigFile } from '../../src/config/index.js'
import { createTempDir } from '../support/stores.js'

/**
 * A YAML config with a syntax error is refused naming the line and column; a JSON one said only "at position
 * 412" (or "Unexpected end of JSON input"), which no editor shows. Both name the line and column.
 */
describe('a JSON config with a syntax error is refused naming its line and column', () => {
  let dir: Awaited<ReturnType<typeof createTempDir>>
  before(async () => {
    dir = await createTempDir('warrant-json-syntax-')
  })
  after(async () => {
    await dir?.drop()
  })

  const refusal = (text: string) => {
    const path = join(dir.path, 'warrant.json')
    writeFileSync(path, text)
    try {
      loadConfigFile(path)
    } catch (error) {
      return (error as Error).message
    }
    assert.fail('accepted')
  }

  test('a missing colon on line 3', () => {
    assert.match(refusal('{\n  "store": "sqlite:./w.db",\n  "resources" {}\n}\n'), /is not valid JSON at line 3, column 15: /)
  })

  test('a file cut short', () => {
    assert.match(refusal('{\n  "store": "sqlite:./w.db",\n  "resources": {'), /is not valid JSON at line 3, column 17 \(the end of the file\): /)
  })
})
