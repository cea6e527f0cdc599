import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { trackOutcomeCommits } from '../../src/operations/outcome-commits.js'

/** A promise and the hands that settle it. */
function deferred<T>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)))
  return { promise, resolve, reject }
}

describe('outcome commits an executor waits for', () => {
  it('settles only once every outcome committed, including one tracked while it waited', async () => {
    const commits = trackOutcomeCommits(() => assert.fail('nothing failed'))
    const first = deferred<boolean>()
    const second = deferred<boolean>()
    commits.track(first.promise)
    let settled = false
    const waiting = commits.settled().then(() => (settled = true))
    commits.track(second.promise)
    first.resolve(true)
    await new Promise((r) => setImmediate(r))
    assert.equal(settled, false, 'the second outcome has not committed yet')
    second.resolve(true)
    await waiting
    assert.equal(commits.failure(), null)
  })

  it('keeps the first failure, stops the run once per failure, and still waits for the rest', async () => {
    let stops = 0
    const commits = trackOutcomeCommits(() => (stops += 1))
    const late = deferred<boolean>()
    commits.track(Promise.reject(new Error('disk full')))
    commits.track(Promise.reject(new Error('second')))
    commits.track(late.promise)
    let settled = false
    const waiting = commits.settled().then(() => (settled = true))
    await new Promise((r) => setImmediate(r))
    assert.equal(settled, false)
    late.resolve(true)
    await waiting
    assert.equal((commits.failure()?.error as Error).message, 'disk full')
    assert.equal(stops, 2)
  })
})
