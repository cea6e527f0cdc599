/** One link of an RFC 8288 `Link` header: its target as written and its relation types (lower case). */
export interface HeaderLink {
  readonly target: string
  readonly rels: readonly string[]
}

/**
 * Parses a `Link` header. Targets are taken between `<` and `>`, so commas inside URLs are kept.
 *
 * @example parseLinkHeader('<https://api.example/items?page=2>; rel="next", <…?page=9>; rel="last"')
 */
export function parseLinkHeader(header: string): HeaderLink[] {
  const links: HeaderLink[] = []
  for (const match of header.matchAll(/<([^>]*)>([^<]*)/g)) {
    const params = match[2] ?? ''
    const rel = /(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(params)
    const value = rel ? (rel[1] ?? rel[2] ?? '') : ''
    links.push({ target: match[1]!.trim(), rels: value.toLowerCase().split(/\s+/).filter(Boolean) })
  }
  return links
}

/** The target of the `rel="next"` link, or null when there is none. */
export function nextLinkOf(header: string | null): string | null {
  if (header === null) return null
  return parseLinkHeader(header).find((l) => l.rels.includes('next'))?.target ?? null
}
