import { DEFAULT_MAX_BODY_BYTES } from '../api/input-guard.js'
import { WarrantError, decodeUtf8Marking, escapeMarkedBytes } from '../contract/index.js'
import { Transform, type Readable, type Writable } from 'node:stream'
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import type { ArgumentRefusals } from './argument-refusals.js'
import type { StdioErrorTrail } from './stdio-audit.js'
import { unfaithfulMessage } from './faithful-message.js'
import { JSON_RPC, NOT_JSON_RPC, jsonRpcError, jsonRpcRefusal, messageId } from './json-rpc-errors.js'

/**
 * stdin for the stdio transport, minus any line it cannot take as the message written, each answered here with
 * a JSON-RPC error (what HTTP answers): one naming a key twice (the SDK's JSON.parse would keep only the last of
 * the two, and the tool would answer another question than the one asked), a number JSON.parse would round (the
 * tool would act on a value nobody sent), or nesting, text or a key no store keeps, outside a tool's arguments
 * (-32600 in the message's own members, -32602 in its params: see unfaithfulMessage); one that is not JSON
 * (-32700), and JSON that is not a JSON-RPC message (-32600). The SDK drops the last two with no answer and no log, so a client waiting for that id would
 * wait forever. Blank lines carry nothing and are skipped. A key twice or a rounded number inside a tool call's
 * arguments passes, held in `refusals` (the server's) for the tool to refuse as an `isError` result. A line longer
 * than `maxLineBytes` (server.max_body_bytes) is answered -32000 payload_too_large, as /mcp answers such a body, and
 * its bytes are dropped as they come, never held. Each error answered here, and each message passed on, is told to
 * `trail` (the audit of JSON-RPC errors outside a tool, as /mcp records them).
 *
 * @example new StdioServerTransport(withoutDuplicateKeys(process.stdin, process.stdout, refusals), process.stdout)
 */
export function withoutDuplicateKeys(input: Readable, output: Writable, refusals?: ArgumentRefusals, maxLineBytes: number = DEFAULT_MAX_BODY_BYTES, trail?: StdioErrorTrail): Readable {
  // Lines are cut at the byte 0x0A (never inside a UTF-8 character), then decoded whole: a character that straddles
  // two chunks stays one, and a byte that is not UTF-8 is kept as a lone surrogate (decodeUtf8Marking) to be refused
  // where it lies (an argument's by the tool, as an isError result), never read as U+FFFD
  let pending: Buffer[] = []
  let pendingBytes = 0
  /** a line over the limit was answered: its bytes are dropped up to its end */
  let dropping = false
  // as /mcp refuses a body over server.max_body_bytes, unread: a line of no end would otherwise grow the process
  const refuse = (error: object, request?: unknown) => {
    trail?.answered(error, request)
    output.write(`${JSON.stringify(error)}\n`)
  }
  const refuseLong = () =>
    refuse(jsonRpcRefusal(new WarrantError('payload_too_large', `the line is larger than ${maxLineBytes} bytes, the most this gateway accepts (server.max_body_bytes); it was not read`, { max_bytes: maxLineBytes }), JSON_RPC.serverError))
  const take = (push: (line: string) => void, bytes: Buffer) => {
    const { text: line, firstBadByte } = decodeUtf8Marking(bytes)
    if (line.trim() === '') return
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      refuse(jsonRpcError(null, JSON_RPC.parseError, 'Parse error: the line is not JSON; send one JSON-RPC message per line'))
      return
    }
    // a key given twice, a rounded number, too deep, bad text: -32600 in the message's own members, -32602 in its params
    const unfaithful = unfaithfulMessage(line, parsed, 'line', refusals)
    if (unfaithful) refuse(unfaithful, parsed)
    else if (!JSONRPCMessageSchema.safeParse(parsed).success) refuse(jsonRpcError(messageId(parsed), JSON_RPC.invalidRequest, NOT_JSON_RPC), parsed)
    else {
      trail?.received(parsed)
      // re-encoded raw, a marked byte would become U+FFFD: passed on as its escape, which the SDK parses back
      push(firstBadByte === null ? line : escapeMarkedBytes(line))
    }
  }
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let start = 0
      for (let newline; (newline = chunk.indexOf(0x0a, start)) >= 0; start = newline + 1) {
        if (dropping) dropping = false
        else if (pendingBytes + newline - start > maxLineBytes) refuseLong()
        else take((line) => this.push(line), Buffer.concat([...pending, chunk.subarray(start, newline + 1)]))
        pending = []
        pendingBytes = 0
      }
      const rest = chunk.subarray(start)
      if (rest.length > 0 && !dropping) {
        pending.push(rest)
        pendingBytes += rest.length
        if (pendingBytes > maxLineBytes) {
          refuseLong()
          dropping = true
          pending = []
          pendingBytes = 0
        }
      }
      done()
    },
    flush(done) {
      const rest = Buffer.concat(pending)
      if (rest.length > 0) this.push(rest)
      done()
    },
  })
  return input.pipe(lines)
}
