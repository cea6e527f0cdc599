import unhomoglyph from 'unhomoglyph'
import { readingSkeleton } from './revealed.js'

/**
 * Letters of other scripts drawn like a Latin letter in common fonts, with that letter: the Cyrillic, Greek, Armenian,
 * Cherokee and Lisu rows of Unicode's confusables (UTS #39) that map to one plain Latin letter. Kept short on purpose:
 * the letters a look-alike name is made of, not every near-miss (Canadian Syllabics, Carian, Lycian and Old Italic
 * have a few such letters too, not enough to spell most names).
 */
export const DRAWN_AS_LATIN: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a', е: 'e', о: 'o', р: 'p', с: 'c', у: 'y', х: 'x', і: 'i', ј: 'j', ѕ: 's', һ: 'h', ԁ: 'd', ԛ: 'q', ԝ: 'w', ӏ: 'l', ү: 'y',
  А: 'A', В: 'B', Е: 'E', К: 'K', М: 'M', Н: 'H', О: 'O', Р: 'P', С: 'C', Т: 'T', Х: 'X', У: 'Y', Ѕ: 'S', І: 'I', Ј: 'J', Ү: 'Y',
  // Greek
  α: 'a', ο: 'o', ρ: 'p', ν: 'v', ι: 'i', υ: 'u', χ: 'x', γ: 'y',
  Α: 'A', Β: 'B', Ε: 'E', Ζ: 'Z', Η: 'H', Ι: 'I', Κ: 'K', Μ: 'M', Ν: 'N', Ο: 'O', Ρ: 'P', Τ: 'T', Υ: 'Y', Χ: 'X',
  // Armenian
  օ: 'o', ս: 'u', ո: 'n', հ: 'h',
  // Cherokee: capitals drawn as Latin capitals (and the few small letters drawn as Latin ones); a word wholly in them
  // ("ᎠᎪᏙᎬ") reads as a Latin name
  Ꭰ: 'D', Ꭱ: 'R', Ꭲ: 'T', Ꭵ: 'i', Ꭹ: 'Y', Ꭺ: 'A', Ꭻ: 'J', Ꭼ: 'E', Ꮃ: 'W', Ꮇ: 'M', Ꮋ: 'H', Ꮍ: 'Y', Ꮐ: 'G', Ꮒ: 'h',
  Ꮓ: 'Z', Ꮟ: 'b', Ꮢ: 'R', Ꮤ: 'W', Ꮥ: 'S', Ꮩ: 'V', Ꮪ: 'S', Ꮮ: 'L', Ꮯ: 'C', Ꮲ: 'P', Ꮶ: 'K', Ꮷ: 'd', Ᏻ: 'G', Ᏼ: 'B',
  ꭵ: 'i', ꮁ: 'r', ꮃ: 'w', ꮓ: 'z', ꮩ: 'v', ꮪ: 's', ꮯ: 'c',
  // Lisu: an alphabet of Latin capitals ("ꓮꓡꓲꓚꓰ" reads ALICE); its I mapped to I, as the Cyrillic І is
  ꓐ: 'B', ꓑ: 'P', ꓒ: 'd', ꓓ: 'D', ꓔ: 'T', ꓖ: 'G', ꓗ: 'K', ꓙ: 'J', ꓚ: 'C', ꓜ: 'Z', ꓝ: 'F', ꓟ: 'M', ꓠ: 'N', ꓡ: 'L',
  ꓢ: 'S', ꓣ: 'R', ꓦ: 'V', ꓧ: 'H', ꓪ: 'W', ꓫ: 'X', ꓬ: 'Y', ꓮ: 'A', ꓰ: 'E', ꓲ: 'I', ꓳ: 'O', ꓴ: 'U',
}

/**
 * Printable ASCII characters that Unicode's confusables table maps to another prototype (the digit one, capital I
 * and the vertical line to small l, zero to capital O, m to r n, the grave accent to the apostrophe…), read off
 * the table itself so the fast path for plain ids cannot drift from it.
 */
const ASCII_PROTOTYPES: ReadonlyMap<string, string> = new Map(
  Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i))
    .map((ch) => [ch, unhomoglyph(ch)] as const)
    .filter(([ch, prototype]) => prototype !== ch),
)

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

/**
 * What a value is drawn as, for telling whether two values pass for one another (UTS #39's skeleton, with the
 * whole of its table: confusables.txt, as the `unhomoglyph` package carries it): the reading skeleton
 * (`readingSkeleton`: unseen characters dropped, spaces trimmed), decomposed, each character mapped to its prototype, compatibility forms folded (NFKD: fullwidth, ligatures,
 * mathematical alphanumerics, superscripts) and mapped again. "admin-I", "admin-l" and "admin-1" share one, as do
 * "user-10" and "user-1O", "model" and "rnodel", "ﬁle" and "file", "cafe" plus U+0301 and "café". Case is kept:
 * "ACME" and "acme" read as two values.
 */
export function confusableSkeleton(text: string): string {
  // printable ASCII, nearly every id, has nothing to drop or normalise: only the spaces and the table's rows apply
  if (PRINTABLE_ASCII.test(text)) {
    let out = ''
    for (const ch of text.trim().replace(/ {2,}/g, ' ')) out += ASCII_PROTOTYPES.get(ch) ?? ch
    return out
  }
  return unhomoglyph(unhomoglyph(readingSkeleton(text).normalize('NFD')).normalize('NFKD')).normalize('NFD')
}

/**
 * How many units at the start (`head`) and at the end (`tail`) every sequence shares, the two never overlapping in
 * the shortest: what lies between is where the sequences differ. Units, so a caller can walk code points, or
 * graphemes and revealed escapes whole.
 */
export function sharedEnds<T>(sequences: readonly (readonly T[])[]): { head: number; tail: number } {
  const first = sequences[0] ?? []
  const shortest = Math.min(...sequences.map((c) => c.length))
  let head = 0
  while (head < shortest && sequences.every((c) => c[head] === first[head])) head++
  let tail = 0
  while (tail < shortest - head && sequences.every((c) => c[c.length - 1 - tail] === first[first.length - 1 - tail])) tail++
  return { head, tail }
}

/**
 * Where values that share a skeleton differ: each value's characters between the prefix and suffix all of them share
 * ("I" of "admin-I", "l" of "admin-l"), to be spelled by code point beside the value.
 */
export function differingParts(values: readonly string[]): string[] {
  const chars = values.map((v) => [...v])
  const { head, tail } = sharedEnds(chars)
  return chars.map((c) => c.slice(head, c.length - tail).join(''))
}
