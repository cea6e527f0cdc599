import { DRAWN_AS_LATIN, confusableSkeleton } from '../contract/index.js'

/** Each letter of another script drawn as a Latin one replaced by it (`DRAWN_AS_LATIN`, the UTS #39 rows). */
function latinLook(text: string): string {
  return [...text].map((ch) => DRAWN_AS_LATIN[ch] ?? ch).join('')
}

/**
 * How a name reads, for telling whether two names pass for one another: compatibility forms folded (fullwidth "ａ"
 * is "a"), each look-alike letter replaced by the Latin one it is drawn as, in lower case. "соре" (all Cyrillic),
 * "ｃｏｐｅ" and "Cope" all read "cope". Names that differ by a letter of the same script drawn alike ("l" and "I")
 * are `drawnNameSkeleton`'s to catch.
 */
export function nameSkeleton(name: string): string {
  // mapped on both sides of lower-casing: Cyrillic "В" reads as "B" (so "b"), though its lower case "в" reads as no Latin letter
  return latinLook(latinLook(name.normalize('NFKC')).toLowerCase())
}

/** The characters of `name` that the skeleton changed: what makes it read as another name. */
export function lookalikeCharacters(name: string): string[] {
  return [...new Set([...name].filter((ch) => nameSkeleton(ch) !== ch.toLowerCase()))]
}

/**
 * How a name is drawn, for telling whether two names pass for one another within one script (UTS #39's confusable
 * skeleton, the whole table): mapped, lower-cased, mapped again. Mapped first, so a capital I drawn as l reads as l
 * before lower case would make it an i ("aIice" reads "alice", not "aiice"); lower-cased, since names differing only
 * in case are one reviewer already ("AIice" reads "Alice", so alice); mapped again, so a letter lower case made meets
 * the table ("M", "m", "rn"). "Ian" and "lan" share one, "ian" and "lan" do not (the dot is seen). Erring wide on
 * purpose: "IAN" reads "lan" too, and a refused name costs the operator another choice, a passed one a reviewer
 * taken for another.
 */
export function drawnNameSkeleton(name: string): string {
  return confusableSkeleton(confusableSkeleton(name).toLowerCase())
}
