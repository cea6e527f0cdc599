import { WarrantError, codePointName, mixedScriptCharacters } from '../contract/index.js'

/** A principal's name as stored: trimmed, never empty (an empty name would be one shared, nameless principal). */
export function principalName(raw: string): string {
  const name = raw.trim()
  if (!name) throw new WarrantError('invalid_request', 'a principal needs a name: the person or service that holds the token', { field: 'name' })
  if (name.length > 200) throw new WarrantError('invalid_request', 'a principal name is at most 200 characters', { field: 'name' })
  return name
}

/**
 * Control characters (C0, DEL, C1: a newline, an ANSI escape), invisible format characters (bidi overrides and
 * isolates, zero-width spaces and joiners, the BOM, a soft hyphen), line and paragraph separators, lone surrogates.
 */
const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

/**
 * A new principal's name, refused when it holds a character that changes how it reads rather than what it says: a
 * newline draws a second line (`tok_…  admin  principal=root`), an escape sequence recolours or erases the terminal,
 * a bidi override shows "admin" for "nimda". The CLI escapes names where it prints them, but the name is also read on
 * the review page, in an audit export, by a webhook's consumer, in logs: a reviewer must read as who they are
 * everywhere, so such a name is never stored. Nor is a name with a word that mixes look-alike scripts (see
 * `mixedScriptCharacters`). Checked at creation only: a lookup by name finds what is there, so names stored before
 * these checks keep working.
 */
export function newPrincipalName(raw: string): string {
  const name = principalName(raw)
  const found = UNSHOWABLE.exec(name)
  if (found) {
    const code = `U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
    throw new WarrantError(
      'invalid_request',
      `a principal name cannot hold control or invisible formatting characters: this one holds ${code} at character ${[...name.slice(0, found.index)].length + 1}; they change how the name reads on a terminal, the review page and in the audit log. Give the name as plain text`,
      { field: 'name', character: code },
    )
  }
  // "аlice" with a Cyrillic "а" reads as "alice": marked where Warrant shows it, but a webhook's consumer or a log
  // shows it plain. A word is one script; a name of two words may be two ("Ivan Иванов").
  const mixed = mixedScriptCharacters(name)
  if (mixed.length > 0) {
    const named = mixed.map((ch) => `"${ch}" (${codePointName(ch)})`).join(', ')
    throw new WarrantError(
      'invalid_request',
      `a principal name cannot hold a word that mixes scripts: ${named} beside letters of another script passes for a different letter, so the name reads as another. Write each word in one script`,
      { field: 'name', characters: mixed.map(codePointName) },
    )
  }
  return name
}
