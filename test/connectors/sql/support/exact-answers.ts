import assert from 'node:assert/strict'
import { it } from 'node:test'
import { matchesFilter, type Filter } from '../../../../src/contract/index.js'
import type { FieldType } from '../../../../src/config/index.js'

/**
 * One test per field and filter: the connector's answer is exactly the records whose value, as shown, meets the
 * filter by `matchesFilter` (the in-memory semantics exclusions and preconditions use).
 */
export function itAnswersExactly(
  fields: Readonly<Record<string, FieldType>>,
  names: readonly string[],
  filtersOf: (field: string) => readonly Filter[],
  search: (filter: Filter) => Promise<readonly { readonly id: string; readonly fields: Readonly<Record<string, unknown>> }[]>,
): void {
  for (const field of names) {
    for (const filter of filtersOf(field)) {
      it(`${field}: ${JSON.stringify(filter)} answers exactly the records whose shown value meets it`, async () => {
        const shown = await search({})
        const expected = shown.filter((r) => matchesFilter(r.fields, filter, fields)).map((r) => r.id)
        assert.deepEqual(
          (await search(filter)).map((r) => r.id),
          expected,
          `records as shown: ${JSON.stringify(shown.map((r) => r.fields[field]))}`,
        )
      })
    }
  }
}
