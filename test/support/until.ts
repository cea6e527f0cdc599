import assert from 'node:assert/strict'

/**
 * Polls `check` every 20 ms until it holds; fails the test naming `what` after 20 s. For a state another part
 * reaches in the background (a delivery's first attempt recorded, a receiver's request arrived).
 *
 * @example await until(() => receiver.received.length === 1, 'the first attempt')
 */
export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await check()); waited += 20) {
    if (waited > 20_000) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
