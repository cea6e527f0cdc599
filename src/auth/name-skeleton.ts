import { DRAWN_AS_LATIN } from '../contract/index.js'

/** Each letter of another script drawn as a Latin one replaced by it (`DRAWN_AS_LATIN`, the UTS #39 rows). */
function latinLook(text: string): string {
  return [...text].map((ch) => DRAWN_AS_LATIN[ch] ?? ch).join('')
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
