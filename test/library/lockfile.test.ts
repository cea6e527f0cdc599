import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

const read = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'))

/** Whether `version` satisfies `spec` for the range forms package.json uses here: `~X.Y.Z`, `^X.Y.Z`, `X.Y.Z`. */
function satisfies(version: string, spec: string): boolean {
  const m = /^([~^]?)(\d+)\.(\d+)\.(\d+)$/.exec(spec)
  const v = /^(\d+)\.(\d+)\.(\d+)$/.exec(version)
  if (!m || !v) return false
  const [want, have] = [m.slice(2).map(Number), v.slice(1).map(Number)] as [number[], number[]]
  const atLeast = have[0]! > want[0]! || (have[0] === want[0] && (have[1]! > want[1]! || (have[1] === want[1] && have[2]! >= want[2]!)))
  if (m[1] === '') return have.join('.') === want.join('.')
  if (m[1] === '~') return atLeast && have[0] === want[0] && have[1] === want[1]
  return atLeast && have[0] === want[0] && (want[0] !== 0 || have[1] === want[1])
}

// `npm install` rewrites package-lock.json whenever its root entry disagrees with package.json: then a fresh
// clone's first install leaves a modified file behind. This is the check that they agree.
test('package-lock.json agrees with package.json: the same ranges, and a locked version inside each', () => {
  const pkg = read('package.json')
  const lock = read('package-lock.json')
  assert.equal(lock.name, pkg.name)
  assert.equal(lock.version, pkg.version)
  const root = lock.packages['']
  for (const kind of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const) {
    assert.deepEqual(root[kind] ?? {}, pkg[kind] ?? {}, `package-lock.json's root ${kind} differ from package.json's: run npm install and commit the lock`)
    for (const [name, spec] of Object.entries<string>(pkg[kind] ?? {})) {
      const locked = lock.packages[`node_modules/${name}`]
      assert.ok(locked, `${name} is not in package-lock.json`)
      assert.ok(satisfies(locked.version, spec), `${name}: locked ${locked.version} is outside ${spec}`)
    }
  }
})

test('the range check itself', () => {
  assert.ok(satisfies('0.28.19', '~0.28.19') && satisfies('0.28.20', '~0.28.19') && !satisfies('0.29.0', '~0.28.19') && !satisfies('0.28.18', '~0.28.19'))
  assert.ok(satisfies('7.9.0', '^7.6.13') && !satisfies('8.0.0', '^7.6.13') && !satisfies('0.18.0', '^0.17.4') && satisfies('1.2.3', '1.2.3'))
})
