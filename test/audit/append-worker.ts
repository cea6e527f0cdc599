/**
 * A separate process appending to a shared audit log, for the cross-process serialisation test:
 * `node --import tsx test/audit/append-worker.ts <store-url> <count> <label>`.
 */
import { createAuditLog } from '../../src/audit/index.js'
import { createStore } from '../../src/store/index.js'

const [url, count, label] = process.argv.slice(2)
const store = await createStore({ url: url! })
const audit = createAuditLog({ store, log: { error: (fields, message) => process.stderr.write(`${message} ${JSON.stringify(fields)}\n`) } })
const writes: Promise<unknown>[] = []
for (let i = 0; i < Number(count); i++) {
  if (i % 2 === 0) writes.push(audit.record({ actor: null, surface: 'system', action: `worker:${label}`, summary: { i } }))
  else audit.recordCall({ source: label!, method: 'UPDATE', endpoint: 'subscriptions', targetId: `${label}-${i}`, status: null, outcome: 'written', durationMs: 1 })
  if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve))
}
await Promise.all(writes)
await audit.flush()
await store.close()
