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
 * Characters drawn like others of their own script, or like plain ASCII, that compatibility normalisation (NFKD)
 * leaves apart: the rows of Unicode's confusables.txt (UTS #39, the "MA" table of version 10.0.0 and later) for
 * ASCII, Latin-1, Latin Extended-A/B, IPA, spacing modifiers and General Punctuation whose prototype is ASCII.
 * Fullwidth forms, ligatures (ﬁ), mathematical letters and digits (𝐚, 𝟏), superscripts and Roman numerals are not
 * listed: NFKD folds them to ASCII first, and these rows then apply ("Ｉ" → "I" → "l"). Not the whole table (about
 * 6,000 rows over every script): a subset for the ids and names a review page shows, said so in SAFETY.md.
 */
const DRAWN_ALIKE: Readonly<Record<string, string>> = {
  // the digit one, capital I and the vertical line all read as small l; digit zero as capital O; m as r n
  '1': 'l', I: 'l', '|': 'l', '0': 'O', m: 'rn',
  // Latin letters drawn as a plain one: dotless i, the IPA iota, small-capital I and Y, script a and g, long s
  ı: 'i', ɩ: 'i', ɪ: 'i', Ɩ: 'l', ǀ: 'l', ɑ: 'a', ɡ: 'g', ƍ: 'g', ɣ: 'y', ʏ: 'y', ʋ: 'u', ɯ: 'w', ƽ: 's', Ƅ: 'b', Ʀ: 'R', ſ: 'f',
  // Latin letters drawn as a digit, and letter pairs drawn as their two letters
  Ƨ: '2', Ʒ: '3', Ȝ: '3', Ƽ: '5', Ȣ: '8', ȣ: '8', æ: 'ae', Æ: 'AE', œ: 'oe', Œ: 'OE', '×': 'x',
  // hyphens and dashes drawn as the hyphen-minus; primes and modifier apostrophes as the apostrophe
  '\u2010': '-', '\u2012': '-', '\u2013': '-', '\u02D7': '-', '`': "'", '\u00B4': "'", ʹ: "'", ʻ: "'", ʼ: "'", ʽ: "'", ˈ: "'",
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

/** Each character drawn as a Latin letter of another script replaced by it, then each drawn-alike one by its prototype. */
function prototypes(text: string): string {
  let out = ''
  for (const ch of text) {
    const latin = DRAWN_AS_LATIN[ch] ?? ch
    out += DRAWN_ALIKE[latin] ?? latin
  }
  return out
}

/**
 * What a value is drawn as, for telling whether two values pass for one another (UTS #39's skeleton, with the
 * subset of its table above): the reading skeleton (`readingSkeleton`: unseen characters dropped, spaces trimmed),
 * decomposed, each character mapped to its prototype, compatibility forms folded (NFKD: fullwidth, ligatures,
 * mathematical alphanumerics, superscripts) and mapped again. "admin-I", "admin-l" and "admin-1" share one, as do
 * "user-10" and "user-1O", "model" and "rnodel", "ﬁle" and "file", "cafe" plus U+0301 and "café". Case is kept:
 * "ACME" and "acme" read as two values.
 */
export function confusableSkeleton(text: string): string {
  // printable ASCII, nearly every id, has nothing to drop or normalise: only the spaces and the table's rows apply
  if (PRINTABLE_ASCII.test(text)) return prototypes(text.trim().replace(/ {2,}/g, ' '))
  return prototypes(prototypes(readingSkeleton(text).normalize('NFD')).normalize('NFKD')).normalize('NFD')
}

/**
 * Where values that share a skeleton differ: each value's characters between the prefix and suffix all of them share
 * ("I" of "admin-I", "l" of "admin-l"), to be spelled by code point beside the value.
 */
export function differingParts(values: readonly string[]): string[] {
  const chars = values.map((v) => [...v])
  const shortest = Math.min(...chars.map((c) => c.length))
  let head = 0
  while (head < shortest && chars.every((c) => c[head] === chars[0]![head])) head++
  let tail = 0
  while (tail < shortest - head && chars.every((c) => c[c.length - 1 - tail] === chars[0]![chars[0]!.length - 1 - tail])) tail++
  return chars.map((c) => c.slice(head, c.length - tail).join(''))
}
