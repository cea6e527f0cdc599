import { WarrantError, doubleHolds, walkJsonText } from '../contract/index.js'

/** Where a JSON text says something JSON.parse would not keep: a key given twice, or a number a double rounds. */
export type TextProblem =
  | { readonly kind: 'twice'; readonly path: string; readonly key: string }
  | { readonly kind: 'rounded'; readonly path: string; readonly literal: string; readonly read_as: string }

/** Every such place in a text JSON.parse accepts, in the order written. */
export function textProblemsOf(text: string): TextProblem[] {
  const found: TextProblem[] = []
  walkJsonText(text, {
    key: (path, key, earlier) => {
      if (earlier.has(key)) found.push({ kind: 'twice', path, key })
      return false
    },
    number: (path, literal) => {
      if (!doubleHolds(literal)) found.push({ kind: 'rounded', path, literal, read_as: String(Number(literal)) })
      return false
    },
  })
  return found
}

/**
 * A tool call's arguments that the message's text shows JSON.parse would change (a key given twice, a rounded
 * number), found by the transport before the SDK parses the message, held by request id for the tool to refuse:
 * invalid arguments are answered by the tool, as an `isError` result with its audit row, like every other invalid
 * argument (MCP 2025-11-25, SEP-1303), never as a JSON-RPC error. Over stdio one holder serves the connection: a
 * later message with the same id and faithful arguments clears what an earlier one left.
 */
export class ArgumentRefusals {
  private readonly held = new Map<string | number, TextProblem>()

  hold(id: string | number, problem: TextProblem): void {
    this.held.set(id, problem)
  }

  clear(id: string | number): void {
    this.held.delete(id)
  }

  /** The refusal for this request's arguments, if its text held one; taken once. */
  take(id: string | number | undefined, tool: string): WarrantError | null {
    if (id === undefined) return null
    const problem = this.held.get(id)
    if (problem === undefined) return null
    this.held.delete(id)
    return argumentRefusal(problem, tool)
  }
}

/** `params.arguments.filter` → `arguments.filter`: the path as a tool's refusals name an argument. */
function argumentPath(path: string): string {
  return path.replace(/^params\./, '')
}

function argumentRefusal(problem: TextProblem, tool: string): WarrantError {
  const where = argumentPath(problem.path)
  if (problem.kind === 'twice')
    return new WarrantError(
      'invalid_request',
      `invalid ${tool} arguments: key "${problem.key}" appears twice in ${where}; JSON keeps only the last, so the call is refused. Give each argument and each filter field once: combine operators in one condition, e.g. {"amount_due": {"gte": 10, "lt": 100}}, or list values with {"in": [...]}`,
      { field: `${where}.${problem.key}`, key: problem.key },
    )
  return new WarrantError(
    'invalid_request',
    `invalid ${tool} arguments: the number ${problem.literal} at ${where} is not one a JSON number (a double) holds exactly; it would be read as ${problem.read_as}, so the call is refused. Send a number of at most 15 significant digits (integers within ±9007199254740991), or a string where the field takes text`,
    { field: where, literal: problem.literal, read_as: problem.read_as },
  )
}
