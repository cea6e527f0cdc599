/**
 * Waits `ms`, or less if `signal` aborts. The timer keeps the process alive: an operation paused for a
 * Retry-After in a CLI process must not end the process (stopping the executor aborts the wait).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}

/**
 * Hands out write slots for one operation: at most `perSecond` writes a second, and none while the whole
 * operation is paused (an upstream said 429 with Retry-After). Slots are granted in the order they are asked
 * for, so targets start in member order.
 */
export class Pacer {
  #nextAt = 0
  #pausedUntil = 0
  #chain: Promise<void> = Promise.resolve()
  /** a pause was set and its end not yet seen */
  #pauseHeld = false
  readonly #interval: number
  /** Called once each time a pause is found over (no pause holds and a slot or claim goes ahead). */
  onResumed: (() => void) | null = null

  /** `now` and `wait` are the executor's clock and its way to let time pass: a test drives both virtually. */
  constructor(
    perSecond: number | null,
    private readonly signal: AbortSignal,
    private readonly now: () => number = Date.now,
    private readonly wait: (ms: number, signal: AbortSignal) => Promise<void> = sleep,
  ) {
    this.#interval = perSecond && perSecond > 0 ? 1000 / perSecond : 0
  }

  /** Pauses every later slot for `ms` from now. */
  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.now() + ms)
    this.#pauseHeld = true
  }

  /** When the pause in force ends (epoch ms); in the past when none holds. */
  pausedUntil(): number {
    return this.#pausedUntil
  }

  #resumedNow(): void {
    if (!this.#pauseHeld || this.signal.aborted) return
    this.#pauseHeld = false
    this.onResumed?.()
  }

  /**
   * Resolves once no pause holds (or the executor is stopping), taking no slot: the executor claims targets
   * (puts them in flight) only then, so a Retry-After pause never holds a target in flight that is not sent.
   */
  async resumed(): Promise<void> {
    for (;;) {
      const wait = this.#pausedUntil - this.now()
      if (this.signal.aborted) return
      if (wait <= 0) return this.#resumedNow()
      await this.wait(Math.min(wait, 1000), this.signal)
    }
  }

  /** Resolves when the next write may start (or at once once the executor is stopping). */
  acquire(): Promise<void> {
    const slot = this.#chain.then(async () => {
      for (;;) {
        if (this.signal.aborted) return
        const wait = Math.max(this.#pausedUntil, this.#nextAt) - this.now()
        if (wait <= 0) break
        await this.wait(Math.min(wait, 1000), this.signal)
      }
      if (this.#pausedUntil <= this.now()) this.#resumedNow()
      this.#nextAt = this.now() + this.#interval
    })
    this.#chain = slot.catch(() => undefined)
    return slot
  }
}
