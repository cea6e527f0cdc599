import assert from 'node:assert/strict'

/** The error an attempt threw; fails the test when it did not throw. */
export async function errorOf(attempt: () => Promise<unknown>): Promise<unknown> {
  try {
    await attempt()
  } catch (error) {
    return error
  }
  assert.fail('the attempt did not fail')
}
