import type { Command } from 'commander'
import { WarrantError, decimalOf, doubleHolds } from '../contract/index.js'

/** For repeatable options (`--filter a --filter b`): every value, in order. */
export const collect = (value: string, previous: readonly string[]): string[] => [...previous, value]

/**
 * A whole number above 0, or an `invalid_request` naming the option: bad input exits 2 with a sentence, never
 * a stack trace.
 */
export const positiveInteger =
  (name: string, max?: number) =>
  (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1) throw new WarrantError('invalid_request', `${name} must be a whole number above 0, not "${value}"`)
    if (max !== undefined && n > max) throw new WarrantError('invalid_request', `${name} must be at most ${max}, not ${value}`)
    return n
  }

/** The page size and budget of a walk, as `walkBudgetOptions` declares them. */
export interface WalkBudgetFlags {
  readonly pageSize?: number
  readonly maxPages?: number
  readonly maxItems?: number
  readonly deadlineMs?: number
}

/**
 * Declares a walk's page size and budget on `command`, in this order, for every command that walks (`search`,
 * `select`); `maxPagesEnd` says what stopping at the page budget makes of the result, `maxDeadlineMs` is the longest
 * deadline the command's gateway call takes (the contract's, so the CLI refuses what HTTP and MCP refuse, naming its flag).
 */
export function walkBudgetOptions(command: Command, maxPagesEnd: string, maxDeadlineMs: number): Command {
  return command
    .option('--page-size <n>', 'records per upstream page', positiveInteger('--page-size'))
    .option('--max-pages <n>', `stop the walk after N pages (${maxPagesEnd})`, positiveInteger('--max-pages'))
    .option('--max-items <n>', 'stop the walk after N records', positiveInteger('--max-items'))
    .option('--deadline-ms <n>', `stop the walk after N milliseconds (at most ${maxDeadlineMs})`, positiveInteger('--deadline-ms', maxDeadlineMs))
}

/**
 * A number given as text on the command line (`--param amount=…`, `-f amount_due>=…`), read as the decimal
 * written or refused: the reason, or the number. Number() reads more than decimals, and each of these would
 * act on a value other than the one the user sees: "0x10" (16: a code? a hex amount?), "Infinity" (no JSON
 * number carries it; a plan would write null), 1e400 (Infinity), 1e-400 (zero), 9007199254740993 (…992).
 * HTTP and MCP take JSON, which has none of these spellings, and refuse the rounded ones alike. "-0" is zero:
 * one zero is kept, so the plan and its digest do not depend on the sign.
 */
export function decimalArgument(text: string): { readonly value: number } | { readonly problem: string } {
  if (decimalOf(text) === null)
    return { problem: 'is not a decimal number: write digits, such as 16, -2.5 or 1e3 (no 0x, 0b or 0o, Infinity, NaN, or _ or , between digits)' }
  const n = Number(text)
  if (!doubleHolds(text.trim())) {
    const outOfRange = !Number.isFinite(n) || n === 0
    return {
      problem: `is not a number a double holds exactly (it would be read as ${n}); ${outOfRange ? 'it is out of a double\'s range (about 1.8e308 at most, and no nonzero value below 5e-324)' : 'give at most 15 significant digits'}`,
    }
  }
  return { value: n === 0 ? 0 : n }
}
