import { performance } from 'node:perf_hooks'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'

/**
 * better-sqlite3 answers synchronously, and kysely chains its statements with promises: without a real I/O
 * wait anywhere, a whole selection freeze or operation on a SQLite store runs as one chain of microtasks and
 * the event loop never turns (no /health answer, no lease-renewal timer). This plugin ends a slice of work
 * after `sliceMs`: the next statement's result is handed back on a later turn of the loop, so timers and
 * sockets are served at least every slice (plus the one statement that ran over it).
 */
export class EventLoopSlices implements KyselyPlugin {
  #sliceStart = performance.now()

  constructor(private readonly sliceMs: number) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (performance.now() - this.#sliceStart >= this.sliceMs) {
      await nextTurn()
      this.#sliceStart = performance.now()
    }
    return args.result
  }
}

/**
 * Runs `each` over `items` synchronously (one prepared SQLite statement per item, say), handing the event
 * loop a turn whenever a slice of `sliceMs` has run: a batch of thousands of rows never holds the loop longer
 * than one slice.
 */
export async function inSlices<T>(items: readonly T[], sliceMs: number, each: (item: T) => void): Promise<void> {
  let sliceStart = performance.now()
  for (let i = 0; i < items.length; i++) {
    each(items[i]!)
    // the clock is read every 64 items: cheap next to a statement, fine-grained next to a slice
    if ((i & 63) === 63 && performance.now() - sliceStart >= sliceMs) {
      await nextTurn()
      sliceStart = performance.now()
    }
  }
}
