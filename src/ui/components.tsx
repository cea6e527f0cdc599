import type { Child } from 'hono/jsx'
import type { Actor, IncompleteReason } from '../contract/index.js'
import type { FieldType } from '../config/index.js'
import { canonicalJson } from '../contract/index.js'
import { type FieldTypes, count, looksLikeProduction, plural, relative, scalarText, utc } from './format.js'
import { revealed } from './reveal.js'
import { LONG_VALUE, type ShownParts, changedParts } from './changed-part.js'

/** What every signed-in page knows about the viewer. */
export interface Viewer {
  readonly actor: Actor
  readonly csrf: string
  /** Principal id → name, to show who proposed or decided. */
  readonly names: ReadonlyMap<string, string>
  /**
   * The gateway's clock (the store's, epoch ms) when the request arrived: the instant the services judged expiry at,
   * so every relative time on the page is read against it, never the machine's wall clock.
   */
  readonly now: number
}

/** A principal by name, its id in the title. */
export function Who(props: { viewer: Viewer; principal: string | null | undefined }) {
  if (!props.principal) return <span class="empty">nobody</span>
  const name = props.viewer.names.get(props.principal)
  return <span title={revealed(props.principal)}>{revealed(name ?? props.principal)}</span>
}

export const paths = {
  queue: '/review',
  signIn: '/review/sign-in',
  signOut: '/review/sign-out',
  plan: (id: string) => `/review/plans/${encodeURIComponent(id)}`,
  planAudit: (id: string) => `/review/plans/${encodeURIComponent(id)}/audit`,
  decision: (id: string) => `/review/plans/${encodeURIComponent(id)}/decision`,
  selection: (id: string) => `/review/selections/${encodeURIComponent(id)}`,
  excluded: (id: string, rule: string) => `/review/selections/${encodeURIComponent(id)}/excluded?rule=${encodeURIComponent(rule)}`,
  exportOf: (id: string, format: 'csv' | 'ndjson') => `/review/selections/${encodeURIComponent(id)}/export?format=${format}`,
  recover: (id: string) => `/review/selections/${encodeURIComponent(id)}/recover`,
  retry: (id: string) => `/review/selections/${encodeURIComponent(id)}/retry`,
  operation: (id: string) => `/review/operations/${encodeURIComponent(id)}`,
  operationStatus: (id: string) => `/review/operations/${encodeURIComponent(id)}/status`,
  compensation: (id: string) => `/review/operations/${encodeURIComponent(id)}/compensation`,
  remainder: (id: string) => `/review/operations/${encodeURIComponent(id)}/remainder`,
  css: '/review/assets/review.css',
  js: '/review/assets/review.js',
}

export function Layout(props: { title: string; viewer?: Viewer | null; children?: Child }) {
  const viewer = props.viewer ?? null
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{props.title} · Warrant review</title>
        <link rel="stylesheet" href={paths.css} />
        <script src={paths.js} defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to the content
        </a>
        <header class="site">
          <a class="brand" href={paths.queue}>
            Warrant · review
          </a>
          {viewer ? (
            <nav aria-label="Review pages">
              <a href={paths.queue}>Queue</a>
              {/* revealed as every other name: one stored before names were checked may hold a look-alike letter or an override */}
              <span class="muted">
                Signed in as <strong>{revealed(viewer.actor.name)}</strong> ({viewer.actor.role})
              </span>
              <form method="post" action={paths.signOut}>
                <input type="hidden" name="csrf" value={viewer.csrf} />
                <button type="submit" class="link">
                  Sign out
                </button>
              </form>
            </nav>
          ) : null}
        </header>
        <main id="main" tabindex={-1}>
          {props.children}
        </main>
        <footer>Warrant shows the whole manifest, the exact change, where it lands, and what is missing. Times are UTC.</footer>
      </body>
    </html>
  )
}

/** The hosts a resource's connector reaches, and the environment's `host` when it names none of them (`reachOf`). */
export interface Reach {
  readonly hosts: readonly string[]
  readonly mislabelled: string | null
}

/** Where the writes land: never a detail. Red for an environment that reads like production. */
export function EnvBanner(props: { environment: string; resource: string; what?: Child; label?: string; reach?: Reach }) {
  const hosts = props.reach?.hosts ?? []
  const prod = looksLikeProduction(props.environment) || hosts.some(looksLikeProduction)
  const reached = hosts.map(revealed).join(', ')
  return (
    <section class={`env${prod ? ' prod' : ''}`} aria-label="Environment">
      {/* said in words too: with the system's forced colours (or to a reader who cannot tell red) the red banner looked like any other */}
      <span class="label">
        {props.label ?? 'Writes land in'}
        {prod ? ' production' : ''}
      </span>
      <span class="name" data-testid="environment">
        {revealed(props.environment)}
      </span>
      <span class="what">
        Resource <strong>{revealed(props.resource)}</strong>
        {props.what ? <> · {props.what}</> : null}
      </span>
      {hosts.length > 0 ? (
        <span class="what" data-testid="connector-hosts">
          Connector reaches {reached}
          {props.reach?.mislabelled ? (
            <strong>
              {' '}
              (the label names host {revealed(props.reach.mislabelled)}, not {reached}: the config&apos;s environment is mislabelled, and
              the connector is what reads and writes)
            </strong>
          ) : null}
        </span>
      ) : null}
    </section>
  )
}

/** Whether the evidence covers the whole requested scope: the second-loudest thing on a page. */
export function CompletenessBanner(props: { complete: boolean; count: number; reasons: readonly IncompleteReason[]; anchor?: string }) {
  if (props.complete)
    return (
      <section class="completeness" aria-label="Completeness" data-testid="completeness">
        <strong>Complete.</strong> The inventory covered the whole requested scope: this manifest of {plural(props.count, 'record')} is every record the selector
        matched, not a sample.
      </section>
    )
  return (
    <section class="completeness incomplete" role="alert" aria-label="Completeness" data-testid="completeness">
      <strong>Incomplete: evidence is missing.</strong> The inventory stopped before it covered the whole scope (
      {props.reasons.map((r) => r.code).join(', ') || 'no reason recorded'}). The {plural(props.count, 'record')} below are what it returned, not the
      whole set. This cannot be approved or committed. {props.anchor ? <a href={props.anchor}>What is missing, and the choices</a> : null}
    </section>
  )
}

export function Notice(props: { kind?: 'info' | 'ok' | 'warn' | 'error'; title?: string; children?: Child; testid?: string }) {
  const kind = props.kind ?? 'info'
  return (
    <div class={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'} data-testid={props.testid}>
      {props.title ? (
        <p>
          <strong>{props.title}</strong>
        </p>
      ) : null}
      {props.children}
    </div>
  )
}

export function Pill(props: { state: string; testid?: string }) {
  return (
    <span class={`pill ${props.state}`} data-testid={props.testid}>
      {props.state}
    </span>
  )
}

/**
 * A value as `scalarText` reads it, empty values saying so rather than showing nothing; `type`, its field's declared
 * type where the page knows it; `parts`, the same text cut where it changed (`changedParts`), that part marked.
 */
export function Val(props: { value: unknown; type?: FieldType | undefined; parts?: ShownParts | undefined }) {
  const v = props.value
  // absent: the upstream's answer did not carry the field at all; empty: it carried null
  if (v === undefined) return <span class="empty">absent</span>
  if (v === null) return <span class="empty">empty</span>
  if (v === '') return <span class="empty">"" (empty text)</span>
  if (Array.isArray(v) && v.length === 0) return <span class="empty">none</span>
  const text = scalarText(v, props.type)
  // isolated (`.val`): a right-to-left value drew the words beside it into its run, "פתוח → סגור" read after → before
  const p = props.parts
  return (
    <span class={text.length > LONG_VALUE ? 'val long' : 'val'}>
      {p ? (
        <>
          {p.head}
          <mark class="changed">{p.changed}</mark>
          {p.tail}
        </>
      ) : (
        text
      )}
    </span>
  )
}

/**
 * A value the agent wrote (an action parameter, or a set value made from one), always set apart: boxed, in quotes
 * whose inner quotes are escaped, and labelled. Shown bare, a reason "hold (reversible); 0 of 240 records change"
 * continued the glance's own sentence and read as the page's words about the plan.
 */
export function AgentWords(props: { value: unknown }) {
  const v = props.value
  const text = typeof v === 'string' ? JSON.stringify(revealed(v)) : scalarText(v)
  return (
    <>
      <span class="agent-words" title="Written by the agent that proposed this plan, not by Warrant">
        {text}
      </span>
      <span class="muted small"> (the agent's words{v === '' ? ': empty text' : ''})</span>
    </>
  )
}

/**
 * A compensation's parameter: Warrant drew it from the operation it undoes (its id, the targets' digest), so it is
 * labelled as Warrant's, not set apart as words an agent chose.
 */
export function WarrantWords(props: { value: unknown }) {
  const v = props.value
  return (
    <>
      <code>{typeof v === 'string' ? JSON.stringify(revealed(v)) : scalarText(v)}</code>
      <span class="muted small"> (set by Warrant from the operation)</span>
    </>
  )
}

/**
 * A record's id as the upstream gave it: revealed, and wrapped anywhere once long. An unwrapped id of thousands
 * of characters made its table as wide, the outcome and the change beside it far out of sight.
 */
export function RecordId(props: { id: string }) {
  const text = revealed(props.id)
  return <code class={text.length > LONG_VALUE ? 'long' : undefined}>{text}</code>
}

export function Change(props: { field: string; before: unknown; after: unknown; type?: FieldType | undefined }) {
  // an absent value is not "already" an empty one: the answer did not say the field is empty
  const same = props.before !== undefined && props.after !== undefined && canonicalJson(props.before) === canonicalJson(props.after)
  // a long text's changed part marked on both sides: near-identical long values read alike, whatever changed
  const [was, becomes] = changedParts(props.before, props.after, props.type) ?? []
  return (
    <div class="change">
      <code>{props.field}</code>: <Val value={props.before} type={props.type} parts={was} />
      <span class="arrow" aria-label="becomes">
        →
      </span>
      <span class="after">
        <Val value={props.after} type={props.type} parts={becomes} />
      </span>
      {same ? <span class="muted small"> (already)</span> : null}
    </div>
  )
}

/** A table wrapped so it scrolls sideways on a phone, and can be scrolled with the keyboard. */
export function TableScroll(props: { label: string; children?: Child }) {
  return (
    <div class="table-scroll" role="region" aria-label={props.label} tabindex={0}>
      {props.children}
    </div>
  )
}

/** A column heading: plain text, or `{ num }` for a figure column, right-aligned so digits line up. */
export type Column = string | { readonly num: string }

/**
 * Every table on these pages: scrollable on a phone, headings scoped to their columns, one body of rows.
 * Rows are the children; a row's first cell is a `<th scope="row">` where it names the row.
 */
export function DataTable(props: { label: string; columns: readonly Column[]; testid?: string; caption?: Child; captionClass?: string; children?: Child }) {
  return (
    <TableScroll label={props.label}>
      <table data-testid={props.testid}>
        {props.caption === undefined ? null : <caption class={props.captionClass}>{props.caption}</caption>}
        <thead>
          <tr>
            {props.columns.map((c) =>
              typeof c === 'string' ? (
                <th scope="col">{c}</th>
              ) : (
                <th scope="col" class="num">
                  {c.num}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </TableScroll>
  )
}

/** A record's cells in manifest order: its ordinal, then its review fields, the first one naming the row. */
export function RecordCells(props: { ord: number; fields: readonly string[]; values: Readonly<Record<string, unknown>>; types: FieldTypes }) {
  return (
    <>
      <td class="num">{count(props.ord)}</td>
      {props.fields.map((f, i) =>
        i === 0 ? (
          <th scope="row">
            <Val value={props.values[f]} type={props.types[f]} />
          </th>
        ) : (
          <td>
            <Val value={props.values[f]} type={props.types[f]} />
          </td>
        ),
      )}
    </>
  )
}

/**
 * Cursor paging offers only "first" and "next": a cursor cannot jump back one page or to a page number.
 * `first` is null on the first page; `next` is null on the last.
 */
export function PageLinks(props: { first: string | null; next: string | null; nextTestid?: string }) {
  return (
    <>
      {props.first === null ? null : <a href={props.first}>First page</a>}
      {props.next ? (
        <a href={props.next} rel="next" data-testid={props.nextTestid}>
          Next page
        </a>
      ) : (
        <span class="muted">Last page</span>
      )}
    </>
  )
}

/** What a form post or redirect came back to say, at the top of the page; a refusal carries its error code. */
export interface Flash {
  readonly kind: 'ok' | 'error' | 'warn' | 'info'
  readonly title: string
  readonly text?: string
  readonly code?: string
}

/**
 * A refusal's message can repeat what it refused (the digest a form posted, an id, an upstream's words): revealed as
 * every other text on the pages, so an override or an invisible character in it reads as its code point.
 */
export function FlashNotice(props: { flash: Flash | null | undefined }) {
  const f = props.flash
  if (!f) return null
  return (
    <Notice kind={f.kind} title={revealed(f.title)} testid="flash">
      {f.text || f.code ? (
        <p>
          {f.text ? revealed(f.text) : null} {f.code ? <code>{f.code}</code> : null}
        </p>
      ) : null}
    </Notice>
  )
}

/** An instant in UTC; with `relativeTo` (the viewer's `now`), also how far from then ("in 27 min"). */
export function When(props: { iso: string | null | undefined; relativeTo?: number }) {
  if (!props.iso) return <span class="empty">never</span>
  return (
    <time datetime={props.iso} title={props.iso}>
      {utc(props.iso)}
      {props.relativeTo === undefined ? '' : ` (${relative(props.iso, props.relativeTo)})`}
    </time>
  )
}

export function CsrfField(props: { viewer: Viewer }) {
  return <input type="hidden" name="csrf" value={props.viewer.csrf} />
}

export { count, plural }
