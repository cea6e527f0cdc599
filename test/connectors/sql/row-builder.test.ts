import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { rowBuilder } from '../../../src/connectors/sql/sqlite-backend.js'

/** The row as the driver's own objects build it: each column in turn, a repeated name keeping its last value. */
function reference(columns: readonly string[], values: readonly unknown[]): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  columns.forEach((name, i) => Object.defineProperty(row, name, { value: values[i], enumerable: true, writable: true, configurable: true }))
  return row
}

const NAMES = fc.oneof(fc.constantFrom('id', 'version', '__proto__', 'constructor', 'toString', '1', '0', 'a"b', "it's", 'x\\y', '\u2028', 'é', ''), fc.string({ maxLength: 8 }))
const VALUES = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(null), fc.bigInt())

const compiled = (columns: readonly string[]) => rowBuilder(columns)
// as under `node --disallow-code-generation-from-strings`
const uncompiled = (columns: readonly string[]) =>
  rowBuilder(columns, () => {
    throw new EvalError('Code generation from strings disallowed for this context')
  })

describe('sqlite rows from the driver arrays (rowBuilder)', () => {
  for (const [how, build] of [
    ['compiled', compiled],
    ['without code generation', uncompiled],
  ] as const)
    it(`${how}: the same own keys, in the same order, with the same values as the driver's objects, whatever the names`, () => {
      fc.assert(
        fc.property(fc.array(NAMES, { minLength: 1, maxLength: 12 }).chain((columns) => fc.tuple(fc.constant(columns), fc.array(VALUES, { minLength: columns.length, maxLength: columns.length }))), ([columns, values]) => {
          const row = build(columns)(values)
          const expected = reference(columns, values)
          assert.deepEqual(Reflect.ownKeys(row), Reflect.ownKeys(expected))
          for (const key of Reflect.ownKeys(expected)) assert.ok(Object.is((row as any)[key], (expected as any)[key]), String(key))
          // "__proto__" is a column like any other: never the row's prototype
          assert.equal(Object.getPrototypeOf(row), Object.prototype)
        }),
        { numRuns: 300 },
      )
    })
})
