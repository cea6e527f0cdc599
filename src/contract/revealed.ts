import { codePointName, markMixedScript } from './mixed-script.js'

/**
 * Characters that show as nothing or as a plain space (zero-width, joiners, controls, no-break and other spaces,
 * fillers), or that reorder the text after them (bidi overrides, embeddings, isolates and marks); and the
 * combining marks that draw nothing (variation selectors, the grapheme joiner, Khmer inherent vowels, Mongolian
 * variation selectors): "legal_hold" plus U+FE0F reads as "legal_hold" and is another tag.
 */
const UNSEEN =
  /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u115F\u1160\u3164\uFFA0\u2800\u034F\u17B4\u17B5\u180B-\u180F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu

/** A character that joins the one before it: a combining mark, or a Hangul vowel or final consonant jamo. */
const JOINING = /[\p{M}\u1160-\u11FF\uD7B0-\uD7FF]/u
/** A base character with the characters joining it, or joining characters with no base. */
const CLUSTER = /[^\p{M}\u1160-\u11FF\uD7B0-\uD7FF][\p{M}\u1160-\u11FF\uD7B0-\uD7FF]*|[\p{M}\u1160-\u11FF\uD7B0-\uD7FF]+/gu

/**
 * The text with each character that Unicode normalisation (NFC) would change replaced by `mark(ch)`: the joining
 * characters of a cluster NFC composes ("cafe" + U+0301 reads "cafe[U+0301]", never "café"), and a character NFC
 * replaces (the Angstrom sign U+212B). Text already in NFC, nearly all, is returned as it is: two record ids that
 * differ only in their normal form are two records, and must not read as one.
 */
function markUnnormalised(text: string, mark: (ch: string) => string): string {
  if (text.normalize('NFC') === text) return text
  return text.replace(CLUSTER, (cluster) => {
    if (cluster.normalize('NFC') === cluster) return cluster
    return [...cluster].map((ch, i) => (i > 0 || JOINING.test(ch) || ch.normalize('NFC') !== ch ? mark(ch) : ch)).join('')
  })
}

/**
 * Combining marks drawn across or around their letter (canonical class 1, Overlay, and the enclosing marks): "not"
 * with U+0336 on each letter draws struck out, so "n̶o̶t̶ paused" reads as "paused"; U+20E0 draws a "no" sign.
 */
const OVERLAY = /[\u0334-\u0338\u1CD4\u1CE2-\u1CE8\u20D2\u20D3\u20D8-\u20DA\u20E5\u20E6\u20EA\u20EB\u{10A39}\u{16AF0}-\u{16AF4}\u{1BC9E}\u{1D167}-\u{1D169}\p{Me}]/u

/**
 * The text with each overlay mark, and each combining mark that repeats the one before it on the same letter,
 * replaced by `mark(ch)`. Neither is changed by NFC; a repeated mark draws once, so "Acme" with sixty U+030D reads as
 * "Acme" with one.
 */
function markDrawnOver(text: string, mark: (ch: string) => string): string {
  if (!/\p{M}/u.test(text)) return text
  return text.replace(CLUSTER, (cluster) => {
    const chars = [...cluster]
    if (chars.length < 2 && !OVERLAY.test(cluster)) return cluster
    return chars.map((ch, i) => ((i > 0 || JOINING.test(ch)) && (OVERLAY.test(ch) || ch === chars[i - 1]) ? mark(ch) : ch)).join('')
  })
}

/**
 * The one rule for what of a text a reader cannot tell apart, each such character spelled by `mark`: the review
 * pages (`revealed`, `[U+0301]`) and the CLI's cells (`\u0301`) apply it alike, so a value is marked the same way on
 * every surface. Marked: a letter of another script inside a word, a character normalisation would change, a mark
 * drawn over its letter or repeating the one before it (`markDrawnOver`), every
 * unseen character (`UNSEEN`), and each space at either end or in a run of two or more.
 */
export function markIndistinct(text: string, mark: (ch: string) => string): string {
  return markMixedScript(markDrawnOver(markUnnormalised(text, mark), mark), mark)
    .replace(UNSEEN, mark)
    .replace(/^ +| +$| {2,}/g, (spaces) => mark(' ').repeat(spaces.length))
}

/**
 * Text from an agent or an upstream as a reviewer must read it: each unseen character as its code point, and
 * spaces at either end too. Otherwise "legal_hold" plus a zero-width space reads as the rule that removes the
 * legal-hold records (it removes none), and a right-to-left override turns "waiver" into "reviaw".
 * A space stays a space only alone between two other characters: HTML collapses a run of spaces into one, so
 * "Acme  Ltd" would read as another customer's "Acme Ltd"; each space of a run is marked instead, on every page
 * and in attributes alike (a stylesheet's white-space rule would not reach a title or a copied value).
 * A letter of another script inside a word shows as its code point too: "аdmin" with a Cyrillic "а" reads
 * "[U+0430]dmin", never "admin"; a whole word in one script (Russian, Greek, Japanese) reads as written; and so
 * does a character normalisation would change ("cafe[U+0301]" beside "café").
 * Every page, and a notification's sentence, shows such text through this one function, so a value reads the
 * same wherever it appears.
 */
export function revealed(text: string): string {
  // Text that itself spells a mark ("zz[U+200B]", eleven characters) read exactly as "zz" plus a zero-width space:
  // two records drew as one id. The "[" that opens such a spelling is marked in turn ("zz[U+005B]U+200B]").
  return markedUnspoofable(text, (ch) => `[${codePointName(ch)}]`, SPELLED_MARK, '[')
}

/** A "[" that opens text reading as one of `revealed`'s marks, in any case: "[U+200B]", "[u+202e]". */
const SPELLED_MARK = /\[(?=U\+[0-9A-F]{1,6}\])/iu

/** A terminal's control characters by their usual escapes; every other marked character as its code point. */
const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** `\u0430`, or `\u{1d41a}` past the BMP: a character as its code point. */
function escapedCodePoint(ch: string): string {
  const code = ch.codePointAt(0)!
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/**
 * `revealed`'s rule in a terminal's and an agent's own syntax, for the CLI and the MCP text: an unseen character as a
 * backslash escape (a zero-width space `\u200b`, a line break `\n`, ESC `\u001b`, so no terminal sequence is ever
 * written raw). A backslash that opens text reading as such an escape is marked in turn: an id holding the six
 * characters "\u200b" prints `\u005cu200b`, never as the id holding a zero-width space. Any other backslash stays.
 */
export function escapedUnspoofable(text: string): string {
  return markedUnspoofable(text, (ch) => NAMED_ESCAPES[ch] ?? escapedCodePoint(ch), SPELLED_ESCAPE, '\\')
}

/** A "\" that opens text reading as one of `escapedUnspoofable`'s escapes: `\u200b`, `\u{1d41a}`, `\n`, `\r`, `\t`. */
const SPELLED_ESCAPE = /\\(?=u[0-9a-f]{4}|u\{[0-9a-f]+\}|[nrt])/iu

/**
 * `markIndistinct` by `mark`, with the `opener` that begins text spelling a mark (`spelled` matches it) marked too,
 * so no literal text can be taken for a mark. Each part between is marked with the opener beside it kept (then
 * dropped): a space next to it is not at an end.
 */
function markedUnspoofable(text: string, mark: (ch: string) => string, spelled: RegExp, opener: string): string {
  const parts = text.split(spelled)
  if (parts.length === 1) return markIndistinct(text, mark)
  const last = parts.length - 1
  return parts
    .map((part, i) => markIndistinct(`${i > 0 ? opener : ''}${part}${i < last ? opener : ''}`, mark).slice(i > 0 ? 1 : 0, i < last ? -1 : undefined))
    .join(mark(opener))
}

/**
 * What a text reads as once the differences `markIndistinct` marks are taken away: unseen characters dropped, NFC,
 * no spaces at either end, runs of spaces as one. Two record ids with the same skeleton look alike to a reader
 * though they name different records (" r002 " and "r002", NFC and NFD "café").
 */
export function readingSkeleton(text: string): string {
  return text.replace(UNSEEN, '').normalize('NFC').trim().replace(/ {2,}/g, ' ')
}
