import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Pacer } from '../../src/operations/pacer.js'

/** A pacer on a virtual clock: time passes only when it waits, so each slot's time is exact. */
function virtualPacer(perSecond: number | null, signal = new AbortController().signal) {
  const clock = { now: 0, waits: [] as number[] }
  const pacer = new Pacer(perSecond, signal, () => clock.now, async (ms) => {
    clock.waits.push(ms)
    clock.now += ms
  })
  const slot = async () => {
    await pacer.acquire()
    return clock.now
  }
  return { pacer, clock, slot }
}

describe('pacer (virtual clock)', () => {
  test('25 writes a second: slots 40 ms apart, granted in the order asked, even when asked for all at once', async () => {
    const { slot } = virtualPacer(25)
    const granted = await Promise.all(Array.from({ length: 10 }, slot))
    assert.deepEqual(granted, Array.from({ length: 10 }, (_, i) => i * 40))
  })

  test('a pause (Retry-After) holds every later slot until it ends, then the rate resumes', async () => {
    const { pacer, slot } = virtualPacer(10)
    assert.equal(await slot(), 0)
    assert.equal(await slot(), 100)
    pacer.pause(2500)
    assert.equal(await slot(), 2600)
    assert.equal(await slot(), 2700)
  })

  test('waits are at most a second each, so a stop is noticed while paused', async () => {
    const { pacer, clock, slot } = virtualPacer(1)
    await slot()
    pacer.pause(3500)
    await slot()
    assert.ok(clock.waits.every((w) => w <= 1000), JSON.stringify(clock.waits))
    assert.equal(clock.now, 3500)
  })

  test('no rate: every slot at once; a stopped executor gets its slots at once too', async () => {
    const free = virtualPacer(null)
    assert.deepEqual(await Promise.all(Array.from({ length: 5 }, free.slot)), [0, 0, 0, 0, 0])
    const abort = new AbortController()
    const stopped = virtualPacer(1, abort.signal)
    await stopped.slot()
    abort.abort()
    assert.equal(await stopped.slot(), 0)
    assert.deepEqual(stopped.clock.waits, [])
  })
})
