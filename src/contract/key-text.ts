import { hasLoneSurrogate } from './canonical.js'

/**
 * Whether an upstream id or version is text the store cannot keep exactly as given: a lone UTF-16 surrogate
 * (UTF-8 cannot hold it; SQLite reads its bytes back as U+FFFD, PostgreSQL refuses it) or a NUL (PostgreSQL text
 * cannot hold it). A frozen member with such an id would not be the upstream's id, and two of them could become
 * one, so a record carrying one cannot be judged: its reader counts the field as mistyped, as with an integer id
 * JSON.parse rounded.
 */
export function unstorableKey(text: string): boolean {
  return text.includes('\0') || hasLoneSurrogate(text)
}

/** A key quoted for a message: as JSON where it holds such text, so the message shows it and any store keeps it. */
export function quotedKey(text: string): string {
  return unstorableKey(text) ? JSON.stringify(text) : `"${text}"`
}
