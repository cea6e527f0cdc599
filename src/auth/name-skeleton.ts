/**
 * Letters of other scripts drawn like a Latin letter in common fonts, with that letter: the Cyrillic, Greek, Armenian,
 * Cherokee and Lisu rows of Unicode's confusables (UTS #39) that map to one plain Latin letter. Kept short on purpose:
 * the letters a look-alike name is made of, not every near-miss (Canadian Syllabics, Carian, Lycian and Old Italic
 * have a few such letters too, not enough to spell most names).
 */
const LOOKALIKE_LATIN: Readonly<Record<string, string>> = {
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

function latinLook(text: string): string {
  return [...text].map((ch) => LOOKALIKE_LATIN[ch] ?? ch).join('')
}

/**
 * How a name reads, for telling whether two names pass for one another: compatibility forms folded (fullwidth "ａ"
 * is "a"), each look-alike letter replaced by the Latin one it is drawn as, in lower case. "соре" (all Cyrillic),
 * "ｃｏｐｅ" and "Cope" all read "cope". Names that differ by a letter of the same script drawn alike ("l" and "I")
 * are not caught: the check is the cross-script one a name can be forged with, documented in SAFETY.md.
 */
export function nameSkeleton(name: string): string {
  // mapped on both sides of lower-casing: Cyrillic "В" reads as "B" (so "b"), though its lower case "в" reads as no Latin letter
  return latinLook(latinLook(name.normalize('NFKC')).toLowerCase())
}

/** The characters of `name` that the skeleton changed: what makes it read as another name. */
export function lookalikeCharacters(name: string): string[] {
  return [...new Set([...name].filter((ch) => nameSkeleton(ch) !== ch.toLowerCase()))]
}
