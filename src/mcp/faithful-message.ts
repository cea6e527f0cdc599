import { inspectJson } from '../api/input-guard.js'
import { unfaithfulJsonIn } from '../api/unique-keys.js'
import { WarrantError, isWarrantError } from '../contract/index.js'
import { type ArgumentRefusals, type TextProblem, textProblemsOf } from './argument-refusals.js'
import { JSON_RPC, jsonRpcRefusal, messageId } from './json-rpc-errors.js'

/**
 * Why a JSON-RPC message (or batch) as written cannot be taken as the one meant, or null: a key given twice (JSON
 * keeps the last), a number JSON.parse would round, nesting past the door's depth, a NUL byte, a lone surrogate or a
 * `__proto__` key. Where it is decides the JSON-RPC code: in a message's own members (`method`, `id`, `jsonrpc`, a
 * `params` given twice, anything beside them) the message is no valid request, -32600 Invalid Request; inside its
 * `params` the request is valid and its params are not, -32602 Invalid params. Either names where (`root` names the
 * whole: `body` over HTTP, `line` over stdio; a batch's message by its index). The id answered is the message's,
 * null where the id itself is in doubt (given twice, or rounded): JSON-RPC 2.0 says so for an id not detected.
 * A tool call's arguments are left to the tool, which refuses them as an `isError` result naming the argument: text
 * and nesting it inspects itself, a key twice or a rounded number `refusals` holds for it by request id.
 *
 * @example unfaithfulMessage('{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', parsed, 'body', refusals) // -32600, id null
 */
export function unfaithfulMessage(text: string, parsed: unknown, root: string, refusals?: ArgumentRefusals) {
  const batch = Array.isArray(parsed)
  const messages: unknown[] = batch ? parsed : [parsed]
  const textual = unfaithfulJsonIn(text)
  const inArguments = !textual ? new Map<string | number, TextProblem>() : refusals ? argumentProblems(text, messages, batch) : null
  if (textual && !inArguments) {
    const details = textual.details as { path?: string; key?: string; literal?: string; read_as?: string }
    const [index, path] = batch ? splitIndex(details.path ?? '') : [0, details.path ?? '']
    const message = messages[index]
    const where = batch ? `message [${index}]` : 'the message'
    if (inParams(path)) return jsonRpcRefusal(textual, JSON_RPC.invalidParams, messageId(message))
    const twice = details.key !== undefined
    const idInDoubt = twice ? path === '' && details.key === 'id' : path === 'id'
    const refusal = twice
      ? new WarrantError('invalid_request', `key "${details.key}" appears twice in ${path === '' ? 'the top level' : `"${path}"`} of ${where}; JSON keeps only the last, so it is no valid JSON-RPC request. Give each member once`, { ...details, ...(batch ? { message: index } : {}) })
      : new WarrantError('invalid_request', `the number ${details.literal} at "${path}" of ${where} is not one a JSON number (a double) holds exactly; it would be read as ${details.read_as}, so it is no valid JSON-RPC request. Send ${path === 'id' ? 'an id of at most 15 digits, or a string' : 'numbers a double holds exactly'}`, { ...details, ...(batch ? { message: index } : {}) })
    return jsonRpcRefusal(refusal, JSON_RPC.invalidRequest, idInDoubt ? null : messageId(message))
  }
  for (const [index, message] of messages.entries()) {
    const at = batch ? `${root}[${index}]` : root
    const { params, method } = (message ?? {}) as { params?: unknown; method?: unknown }
    const object = message !== null && typeof message === 'object' && !Array.isArray(message)
    const refused =
      refusalOf(() => inspectJson(object ? { ...(message as object), params: undefined } : message, at), JSON_RPC.invalidRequest, message) ??
      refusalOf(() => inspectJson(object ? withoutArguments(method, params) : undefined, `${at}.params`, 1), JSON_RPC.invalidParams, message)
    if (refused) return refused
  }
  // faithful: what an earlier message with the same id left is cleared; unfaithful arguments are held for the tool
  for (const message of messages) {
    const id = messageId(message)
    if (id === null || !refusals) continue
    const problem = inArguments?.get(id)
    if (problem) refusals.hold(id, problem)
    else refusals.clear(id)
  }
  return null
}

/**
 * The first problem of each tool call whose arguments the text shows JSON.parse would change, by request id, when
 * every problem of the text lies inside such a call's `params.arguments`; null when any lies elsewhere (the message
 * itself is then refused) or in a call without an id to answer.
 */
function argumentProblems(text: string, messages: readonly unknown[], batch: boolean): Map<string | number, TextProblem> | null {
  const held = new Map<string | number, TextProblem>()
  const heldFor = new Map<string | number, number>()
  for (const problem of textProblemsOf(text)) {
    const [index, path] = batch ? splitIndex(problem.path) : [0, problem.path]
    const message = messages[index] as { method?: unknown } | undefined
    const id = messageId(message)
    const inside = path === 'params.arguments' ? problem.kind === 'twice' : path.startsWith('params.arguments.')
    // two calls of a batch under one id cannot be told apart when answered: the message is refused
    if (!inside || message?.method !== 'tools/call' || id === null || (heldFor.get(id) ?? index) !== index) return null
    if (!held.has(id)) held.set(id, { ...problem, path })
    heldFor.set(id, index)
  }
  return held
}

/** A batch's path `3.params.x` as its message's index and the path within it. */
function splitIndex(path: string): [number, string] {
  const dot = path.indexOf('.')
  return dot < 0 ? [Number(path), ''] : [Number(path.slice(0, dot)), path.slice(dot + 1)]
}

const inParams = (path: string) => path === 'params' || path.startsWith('params.')

/** A tool call's params without its arguments (the tool inspects those); anything else's params whole. */
function withoutArguments(method: unknown, params: unknown): unknown {
  const call = method === 'tools/call' && params !== null && typeof params === 'object' && !Array.isArray(params)
  return call ? { ...(params as object), arguments: undefined } : params
}

function refusalOf(check: () => void, code: number, message: unknown) {
  try {
    check()
    return null
  } catch (error) {
    if (!isWarrantError(error)) throw error
    return jsonRpcRefusal(error, code, messageId(message))
  }
}
