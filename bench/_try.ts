import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureDemoData } from '../src/demo/index.js'
import { createCatalogue } from '../src/resources/index.js'
import { searchResource } from '../src/resources/search.js'
import { createCursorCodec } from '../src/inventory/index.js'
import { demoConfig } from './fixture.js'
const dir = mkdtempSync(join(tmpdir(), 'x-'))
const up = `sqlite:${join(dir, 'demo.db')}`
await ensureDemoData({ url: up, count: 50000 })
const config = demoConfig(`sqlite:${join(dir, 'w.db')}`, up)
const catalogue = createCatalogue({ config })
const r = catalogue.get('subscriptions')
const codec = createCursorCodec({ key: randomBytes(32) })
for (let i = 0; i < 3; i++) {
  let t = performance.now()
  const env = await searchResource(r, { filter: {}, page_size: 500, budget: { max_items: 50000 } }, { cursorCodec: codec })
  const a = performance.now() - t; t = performance.now()
  const s = JSON.stringify(env)
  const b = performance.now() - t; t = performance.now()
  JSON.parse(s)
  const c = performance.now() - t
  console.log({ search: a.toFixed(0), stringify: b.toFixed(0), parse: c.toFixed(0), mb: (s.length / 1e6).toFixed(1) })
}
await catalogue.close()
