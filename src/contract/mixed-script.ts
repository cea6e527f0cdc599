/**
 * Scripts whose letters pass for one another: Cyrillic "а" (U+0430) and Greek "ο" (U+03BF) draw as Latin "a" and
 * "o", so "аdmin" reads as "admin" and "Москвa" (a Latin "a") as the Russian word. A word written in one of them
 * alone is ordinary text and is never marked: only a word that mixes them.
 */
const LOOKALIKE_SCRIPTS = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Armenian', /\p{Script=Armenian}/u],
  ['Cherokee', /\p{Script=Cherokee}/u],
] as const

/** A word: letters, marks and digits; punctuation, spaces and symbols separate words ("legal_hold" is two). */
const WORD = /[\p{L}\p{M}\p{N}]+/gu
/** A plain ASCII letter or digit: beside one, a compatibility form of one passes for it ("ｐaused", "10０"). */
const ASCII_ALNUM_CHAR = /[A-Za-z0-9]/
const ASCII_ALNUM = /^[A-Za-z0-9]+$/

function scriptOf(ch: string): string | null {
  for (const [name, test] of LOOKALIKE_SCRIPTS) if (test.test(ch)) return name
  return null
}

/**
 * The characters of a word that pass for letters of another script in it: the letters of every lookalike script
 * but the word's main one (the one with most letters; Latin on a tie), and, in a word with a plain ASCII letter or
 * digit, the compatibility forms of ASCII letters and digits (fullwidth "ａ", mathematical "𝐚", the ligature "ﬁ",
 * a fullwidth "０" in "10０", a mathematical "𝟏" in "𝟏00").
 */
function lookalikesIn(word: string): Set<number> {
  const chars = [...word]
  const counts = new Map<string, number>()
  for (const ch of chars) {
    const script = scriptOf(ch)
    if (script) counts.set(script, (counts.get(script) ?? 0) + 1)
  }
  const marked = new Set<number>()
  if (counts.size > 1) {
    const main = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] === 'Latin' ? -1 : b[0] === 'Latin' ? 1 : 0))[0]![0]
    chars.forEach((ch, i) => {
      const script = scriptOf(ch)
      if (script && script !== main) marked.add(i)
    })
  }
  if (chars.some((ch) => ASCII_ALNUM_CHAR.test(ch)))
    chars.forEach((ch, i) => {
      const plain = ch.normalize('NFKC')
      if (plain !== ch && ASCII_ALNUM.test(plain)) marked.add(i)
    })
  return marked
}

/**
 * The text with each lookalike character of a mixed-script word replaced by `mark(ch)`: a reviewer tells "admin"
 * from "аdmin" (shown "[U+0430]dmin"), while a whole word in Russian, Greek, Japanese or Arabic reads as written.
 */
export function markMixedScript(text: string, mark: (ch: string) => string): string {
  // most text is plain ASCII, which mixes nothing
  if (!/[^\x00-\x7f]/.test(text)) return text
  return text.replace(WORD, (word) => {
    const marked = lookalikesIn(word)
    if (marked.size === 0) return word
    return [...word].map((ch, i) => (marked.has(i) ? mark(ch) : ch)).join('')
  })
}

/**
 * The lookalike characters of the text's mixed-script words, each once, in order: what `markMixedScript` would mark.
 * A principal's name holding any is refused at creation (src/auth/principal-name.ts).
 */
export function mixedScriptCharacters(text: string): string[] {
  if (!/[^\x00-\x7f]/.test(text)) return []
  const found = new Set<string>()
  for (const [word] of text.matchAll(WORD)) {
    const chars = [...word]
    for (const i of lookalikesIn(word)) found.add(chars[i]!)
  }
  return [...found]
}

/** `U+0430` for "а": the code point as the pages and the CLI name it. */
export function codePointName(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
}
