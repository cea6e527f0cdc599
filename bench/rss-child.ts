/**
 * Run as its own process (`node --import tsx bench/rss-child.ts <store url> <upstream url>`): freezes every record
 * and prints the process's peak resident set (VmHWM from /proc), so nothing else the bench holds is counted.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { SYSTEM_ACTOR } from '../src/contract/index.js'
import { createCursorCodec } from '../src/inventory/index.js'
import { createCatalogue } from '../src/resources/index.js'
import { createSelectionService } from '../src/selections/index.js'
import { createStore } from '../src/store/index.js'
import { demoConfig } from './fixture.js'

const [storeUrl, upstreamUrl] = process.argv.slice(2)
const config = demoConfig(storeUrl!, upstreamUrl!)
const store = await createStore({ url: config.store })
await store.migrate()
const catalogue = createCatalogue({ config })
const selections = createSelectionService({ store, catalogue, cursorCodec: createCursorCodec({ key: randomBytes(32) }) })
// what the process holds before the freeze (the runtime, tsx's transform of the sources, the modules)
const beforeKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN)
const view = await selections.create(SYSTEM_ACTOR, 'subscriptions', { page_size: 1000 })
const peakKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN)
await catalogue.close()
await store.close()
process.stdout.write(JSON.stringify({ members: view.count, peak_rss_mb: peakKb / 1024, rss_before_mb: beforeKb / 1024 }))
