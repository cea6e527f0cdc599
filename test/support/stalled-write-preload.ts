import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { Writable } from 'node:stream'

/**
 * Loaded with `--import` into a `warrant` subprocess (never into Warrant itself): every file stream it opens accepts
 * the first chunk and never acknowledges it, the way a write stuck on a dead network mount does, except that nothing
 * is left pending in the event loop. The command awaiting it then has a promise that never settles while the loop
 * empties: the case bin.ts's `beforeExit` guard exists for.
 */
fs.createWriteStream = (() => new Writable({ write: () => undefined })) as unknown as typeof fs.createWriteStream
syncBuiltinESMExports()
