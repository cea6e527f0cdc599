import type { Command } from 'commander'
import { WarrantError } from '../contract/index.js'
import { collect } from './option-values.js'

/**
 * Refuses an option that takes one value when it is given twice with different values (`-a pause_collection
 * -a resume_collection`, `--digest A --digest B`): commander keeps the last without a word, so the command would
 * run another request than the one written, as a JSON key named twice would on HTTP. The same value twice is one
 * request; repeatable options (`-f`, `-p`, `-x`, read with {@link collect}) and flags are left as they are. The
 * values are not quoted: one may be a token (`--token`). Installed on `command` and every command under it before
 * it parses; one program parses once.
 */
export function refuseRepeatedOptions(command: Command): void {
  for (const option of command.options) {
    const takesOneValue = (option.required || option.optional) && !option.variadic && option.parseArg !== collect
    if (!takesOneValue) continue
    const name = option.long ?? option.short ?? option.name()
    let given: string | null | undefined
    command.on(`option:${option.name()}`, (value: string | null) => {
      if (given !== undefined && given !== value)
        throw new WarrantError('invalid_request', `option ${name} is given twice with different values; give it once (the last is not taken over the first)`, { option: name })
      given = value
    })
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub)
}
