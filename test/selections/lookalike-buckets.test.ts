import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { confusableSkeleton } from '../../src/contract/index.js'
import { lookalikeIds } from '../../src/selections/index.js'

/** Ids over a small alphabet full of look-alikes (l, I, 1, |, O, 0, m and "rn", a dotless ı, a fullwidth A), so groups are common. */
const idArb = fc.array(fc.constantFrom('l', 'I', '1', 'O', '0', 'r', 'n', 'm', 'a', '\u0131', 'i', '\uFF21', 'A', '-'), { minLength: 1, maxLength: 4 }).map((cs) => cs.join(''))

/** The groups a pairwise reading finds: every id with each other id of its skeleton, in frozen order, two or more. */
function pairwise(ids: readonly string[]): string[][] {
  const groups: string[][] = []
  const placed = new Set<number>()
  ids.forEach((id, i) => {
    if (placed.has(i)) return
    const group = [id]
    for (let j = i + 1; j < ids.length; j++)
      if (!placed.has(j) && confusableSkeleton(ids[j]!) === confusableSkeleton(id)) {
        group.push(ids[j]!)
        placed.add(j)
      }
    if (group.length > 1) groups.push(group)
  })
  return groups
}

test('the hashed two-pass walk finds exactly the groups a pairwise comparison finds, in frozen order', async () => {
  let run = 0
  await fc.assert(
    fc.asyncProperty(fc.uniqueArray(idArb, { maxLength: 60 }), fc.integer({ min: 1, max: 7 }), async (ids, gap) => {
      // ords with gaps, as a renumbered selection may have: the walk pages by the last ord it read
      const members = async (afterOrd: number, limit: number) =>
        ids
          .map((id, i) => ({ ord: (i + 1) * gap, id }))
          .filter((m) => m.ord > afterOrd)
          .slice(0, limit)
      const found = await lookalikeIds({ selection_id: `sel_prop_${run++}`, digest: 'sha256:p' }, members)
      const expected = pairwise(ids)
      assert.deepEqual(found.groups.map((g) => g.map((m) => m.id)), expected.slice(0, 20))
      assert.equal(found.more_groups, Math.max(0, expected.length - 20))
    }),
    { numRuns: 300 },
  )
})

test('a walk longer than one page (2,500 ids) finds a pair split across pages and reads no field', async () => {
  const ids = Array.from({ length: 2_500 }, (_, i) => `row-${String(i).padStart(5, '0')}`)
  ids[3] = 'admin-I'
  ids[2_400] = 'admin-l'
  const asked: number[] = []
  const members = async (afterOrd: number, limit: number) => {
    asked.push(afterOrd)
    return ids.slice(afterOrd, afterOrd + limit).map((id, i) => ({ ord: afterOrd + i + 1, id }))
  }
  const found = await lookalikeIds({ selection_id: 'sel_pages', digest: 'sha256:q' }, members)
  assert.deepEqual(found.groups.map((g) => g.map((m) => m.id)), [['admin-I', 'admin-l']])
  // the first pass and, two hashes having met, the second: each three pages
  assert.deepEqual(asked, [0, 1000, 2000, 0, 1000, 2000])
})
