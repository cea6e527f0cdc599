import { WarrantError } from '../contract/index.js'

const UNIT_MS = { d: 86_400_000, h: 3_600_000 } as const
const MAX_AGE_MS = 36_500 * UNIT_MS.d

/**
 * An age given on the command line: whole days (`30d`) or hours (`12h`), at least one hour, at most 100 years. Anything
 * else is refused as the caller's mistake (exit 2), naming the option, before anything is opened or changed.
 */
export function parseAgeOption(text: string, option: string): number {
  const match = /^([0-9]{1,9})([dh])$/.exec(text.trim())
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : NaN
  if (!(ms >= UNIT_MS.h && ms <= MAX_AGE_MS))
    throw new WarrantError('invalid_request', `${option} must be a whole number of days or hours, from 1h to 36500d (e.g. 30d, 12h); got "${text}"`, { field: option, value: text })
  return ms
}
