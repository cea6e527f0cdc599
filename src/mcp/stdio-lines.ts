import { Transform, type Readable, type Writable } from 'node:stream'
import { duplicateKeyIn } from '../api/unique-keys.js'

/**
 * stdin for the stdio transport, minus any message that names one key twice: that one is answered here with a
 * JSON-RPC error (the refusal HTTP gives), because the SDK's JSON.parse would keep only the last of the two
 * and the tool would answer another question than the one asked.
 *
 * @example new StdioServerTransport(withoutDuplicateKeys(process.stdin, process.stdout), process.stdout)
 */
export function withoutDuplicateKeys(input: Readable, output: Writable): Readable {
  let pending = ''
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8')
      let newline: number
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline + 1)
        pending = pending.slice(newline + 1)
        const refusal = duplicateKeyIn(line)
        if (!refusal) this.push(line)
        else {
          const id = (JSON.parse(line) as { id?: unknown } | null)?.id
          output.write(`${JSON.stringify({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code: -32602, message: `${refusal.code}: ${refusal.message}`, data: refusal.toBody() } })}\n`)
        }
      }
      done()
    },
    flush(done) {
      if (pending) this.push(pending)
      done()
    },
  })
  return input.pipe(lines)
}
