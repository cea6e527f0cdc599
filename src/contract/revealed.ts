import { codePointName, markMixedScript } from './mixed-script.js'

/**
 * Characters that show as nothing or as a plain space (zero-width, joiners, controls, no-break and other spaces,
 * fillers), or that reorder the text after them (bidi overrides, embeddings, isolates and marks); and the
 * combining marks that draw nothing (variation selectors, the grapheme joiner, Khmer inherent vowels, Mongolian
 * variation selectors): "legal_hold" plus U+FE0F reads as "legal_hold" and is another tag.
 */
const UNSEEN =
  /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u115F\u1160\u3164\uFFA0\u2800\u034F\u17B4\u17B5\u180B-\u180F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu

/**
 * Text from an agent or an upstream as a reviewer must read it: each unseen character as its code point, and
 * spaces at either end too. Otherwise "legal_hold" plus a zero-width space reads as the rule that removes the
 * legal-hold records (it removes none), and a right-to-left override turns "waiver" into "reviaw".
 * A space stays a space only alone between two other characters: HTML collapses a run of spaces into one, so
 * "Acme  Ltd" would read as another customer's "Acme Ltd"; each space of a run is marked instead, on every page
 * and in attributes alike (a stylesheet's white-space rule would not reach a title or a copied value).
 * A letter of another script inside a word shows as its code point too: "аdmin" with a Cyrillic "а" reads
 * "[U+0430]dmin", never "admin"; a whole word in one script (Russian, Greek, Japanese) reads as written.
 * Every page, and a notification's sentence, shows such text through this one function, so a value reads the
 * same wherever it appears.
 */
export function revealed(text: string): string {
  return markMixedScript(text, (ch) => `[${codePointName(ch)}]`)
    .replace(UNSEEN, (ch) => `[${codePointName(ch)}]`)
    .replace(/^ +| +$| {2,}/g, (spaces) => '[U+0020]'.repeat(spaces.length))
}
