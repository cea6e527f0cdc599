/**
 * Where a person reviews a plan, as the gateway knows it: a link only where the review pages are served (this
 * process listens, or the operator named `server.public_url`); elsewhere (`warrant mcp` over stdio, the CLI) no
 * link that nobody serves, but a hint naming the `warrant serve` that would serve it and where.
 */
export interface ReviewPages {
  /** The review pages' base URL: where they are served, or (`served` false) where `warrant serve` on this config would listen. */
  readonly base: string
  /** Whether `base` is served: `server.public_url` is set, or this process listens there (`Gateway.listeningAt`). */
  readonly served: boolean
}

export interface ReviewLink {
  readonly review_url: string | null
  readonly review_hint: string | null
}

/**
 * The plan's review_url and review_hint. Without `pages` (a plan service on its own, no gateway): the page's path.
 *
 * @example reviewLink({ base: 'http://127.0.0.1:8787', served: false }, 'plan_1').review_url // null
 */
export function reviewLink(pages: ReviewPages | undefined, planId: string): ReviewLink {
  const path = `/review/plans/${planId}`
  if (pages === undefined) return { review_url: path, review_hint: null }
  if (pages.served) return { review_url: `${pages.base}${path}`, review_hint: null }
  return {
    review_url: null,
    review_hint:
      `no review pages are served by this process (warrant mcp over stdio, or the CLI) and server.public_url is not set: ` +
      `a person reviews this plan on the review pages of \`warrant serve\` running on this config (its store), ` +
      `at ${pages.base}${path} where it listens on the config's server.host and server.port; ` +
      `set server.public_url to the address people open, and review_url gives the link`,
  }
}
