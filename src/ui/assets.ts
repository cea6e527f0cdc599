/**
 * The review pages' one stylesheet and one script, served from /review/assets/ (the Content-Security-Policy
 * allows nothing inline). Plain and calm: the environment and completeness banners are the loudest things.
 */
export const STYLESHEET = `
:root {
  --ink: #1c2128; --muted: #545d68; --line: #d0d7de; --soft: #f6f8fa; --bg: #ffffff;
  --accent: #0a58a8; --ok: #146c2e; --ok-bg: #e9f6ec; --warn: #7d4e00; --warn-bg: #fff6dd;
  --bad: #a4161a; --bad-bg: #fdecec; --focus: #f0b400;
  color-scheme: light;
}
* { box-sizing: border-box; }
html { font-size: 100%; }
body { margin: 0; color: var(--ink); background: var(--bg); font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: var(--accent); text-underline-offset: 2px; }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; overflow-wrap: break-word; }
.digest { overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0.5rem 0 0.75rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 0.5rem; padding-top: 0.75rem; border-top: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.25rem 0 0.4rem; }
p { margin: 0.4rem 0 0.8rem; }
.skip { position: absolute; left: -999px; top: 0; background: var(--ink); color: #fff; padding: 0.5rem 1rem; z-index: 10; }
.skip:focus { left: 0.5rem; }
.site { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: center; justify-content: space-between; padding: 0.6rem 1.25rem; border-bottom: 1px solid var(--line); background: var(--soft); }
.site .brand { font-weight: 700; color: var(--ink); text-decoration: none; }
.site nav { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; }
.site form { margin: 0; }
main { max-width: 78rem; margin: 0 auto; padding: 0.75rem 1.25rem 3rem; overflow-wrap: break-word; }
/* A value wider than the screen wraps anywhere: unbroken, it pushed the columns after it (what each record
   receives) thousands of pixels to the right. Only long values, so short ones never break mid-word on a phone. */
.long { overflow-wrap: anywhere; }
/* A value, an id or an agent's words is its own run of text: a right-to-left value (Hebrew, Arabic) took the arrow
   and the value after it into its run, so a before → after read backwards and a count "(1)" moved before the value
   it counts. Isolated, each reads in place, in the order the page wrote them. */
.val, code, .agent-words { unicode-bidi: isolate; }
.agent-words { border: 1px dashed var(--muted); border-radius: 3px; padding: 0 0.25rem; background: #fdf6e3; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
/* Where a long value changed (one letter of 2,000), on both sides of its before → after. Said in words too, out of
   sight and out of the copied text (generated content): a screen reader does not announce a mark, and forced colours
   drop its background (the outline stays). An empty mark is where the other side has text: a bar. */
mark.changed { background: #ffd84d; color: inherit; outline: 1px solid #7a5c00; }
mark.changed::before, mark.changed::after { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
mark.changed::before { content: " [changed: "; }
mark.changed::after { content: " (end of change)] "; }
mark.changed:empty { display: inline-block; width: 2px; height: 1em; vertical-align: text-bottom; background: #7a5c00; }
mark.changed:empty::before { content: " [changed: the other side has text here] "; }
mark.changed:empty::after { content: none; }
@media (forced-colors: active) { mark.changed { outline: 2px solid Highlight; } mark.changed:empty { background: Highlight; } }
footer { max-width: 78rem; margin: 0 auto; padding: 1rem 1.25rem 2rem; color: var(--muted); font-size: 0.875rem; }
.muted { color: var(--muted); }
.small { font-size: 0.875rem; }

.env { border: 3px solid var(--accent); background: #e8f1fb; padding: 0.75rem 1rem; margin: 0.5rem 0 0.75rem; border-radius: 6px; }
.env.prod { border-color: var(--bad); background: var(--bad-bg); }
.env .label { display: block; font-size: 0.8rem; font-weight: 700; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
.env .name { display: block; font-size: 1.45rem; font-weight: 800; line-height: 1.2; overflow-wrap: anywhere; }
.env .what { display: block; margin-top: 0.25rem; font-size: 1.05rem; }

.completeness { border-left: 8px solid var(--ok); background: var(--ok-bg); padding: 0.6rem 1rem; margin: 0.5rem 0 1rem; border-radius: 4px; }
.completeness strong { font-size: 1.15rem; }
.completeness.incomplete { border-left-color: var(--bad); background: var(--bad-bg); }
.completeness.incomplete strong { color: var(--bad); }

.notice { border: 1px solid var(--line); border-left: 6px solid var(--accent); padding: 0.6rem 1rem; margin: 0.75rem 0; border-radius: 4px; background: var(--soft); }
.notice.error { border-left-color: var(--bad); background: var(--bad-bg); }
.notice.warn { border-left-color: var(--warn); background: var(--warn-bg); }
.notice.ok { border-left-color: var(--ok); background: var(--ok-bg); }
.notice > :first-child { margin-top: 0; }
.notice > :last-child { margin-bottom: 0; }

.glance { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1rem; margin: 0.5rem 0 0.5rem; padding: 0.75rem 1rem; border: 1px solid var(--line); border-radius: 6px; }
.glance dt { font-weight: 700; }
.glance dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0.5rem 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }

.pill { display: inline-block; padding: 0.05rem 0.55rem; border-radius: 999px; border: 1px solid var(--line); background: var(--soft); font-size: 0.875rem; font-weight: 600; white-space: nowrap; }
.pill.pending, .pill.running, .pill.in_flight { border-color: var(--accent); color: var(--accent); }
.pill.approved, .pill.succeeded, .pill.delivered, .pill.committed { border-color: var(--ok); color: var(--ok); background: var(--ok-bg); }
.pill.rejected, .pill.failed, .pill.halted, .pill.expired, .pill.unknown, .pill.completed_with_unknown { border-color: var(--bad); color: var(--bad); background: var(--bad-bg); }
.pill.skipped, .pill.partially_failed, .pill.completed_with_skips { border-color: var(--warn); color: var(--warn); background: var(--warn-bg); }

ul.clauses { margin: 0.25rem 0 0.75rem; padding-left: 1.25rem; }
ul.clauses li { margin: 0.15rem 0; }

.table-scroll { overflow-x: auto; margin: 0.5rem 0 1rem; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 0.94rem; }
caption { text-align: left; font-weight: 700; padding: 0.5rem 0.75rem; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.75rem; border-bottom: 1px solid var(--line); }
/* A table narrower than its words wraps them, headings too, rather than pass its box's edge: a phone's scrollbar
   overlays the content and shows only while scrolling, so the columns past the edge (the Before → after, beside
   name and id) were cut with no mark on a 375-pixel screen or at 200% zoom. A word breaks only where the table
   would not fit otherwise: the auto layout gives a column its whole width first. */
th, td, th code, td code { overflow-wrap: anywhere; }
thead th { background: var(--soft); }
tbody tr:last-child th, tbody tr:last-child td { border-bottom: none; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
/* a count never breaks: 13 drawn as a 1 above a 3 reads as two numbers */
td.num { overflow-wrap: normal; }
tr.failed td, tr.failed th { background: var(--bad-bg); }
.empty { color: var(--muted); font-style: italic; }
.change { min-width: 12rem; }
.change + .change { margin-top: 0.2rem; }
.change .arrow { color: var(--muted); padding: 0 0.25rem; }
.change .after { font-weight: 700; }
.groups { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 0 1rem; }

.pager { display: flex; flex-wrap: wrap; gap: 0.5rem 1.25rem; align-items: center; margin: 0.25rem 0 0.5rem; }
.pager form { display: flex; gap: 0.5rem; align-items: center; margin: 0; }

form.inline { display: inline; }
label { font-weight: 600; }
textarea, input[type=password], input[type=text], select { font: inherit; padding: 0.4rem 0.5rem; border: 1px solid #8c959f; border-radius: 4px; max-width: 100%; }
textarea { width: 100%; min-height: 4.5rem; }
input[type=password] { width: 100%; max-width: 36rem; }
button, .button { font: inherit; font-weight: 600; padding: 0.5rem 1rem; border-radius: 6px; border: 2px solid var(--ink); background: #fff; color: var(--ink); cursor: pointer; text-decoration: none; display: inline-block; }
button:hover { background: var(--soft); }
button.approve { background: var(--ok); border-color: var(--ok); color: #fff; }
button.approve:hover { background: #0f5424; }
button.reject { border-color: var(--bad); color: var(--bad); }
button.link { border: none; padding: 0; background: none; color: var(--accent); text-decoration: underline; font-weight: 400; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; margin-top: 0.75rem; }
.decision { border: 2px solid var(--ink); border-radius: 8px; padding: 0.75rem 1rem 1rem; margin: 1rem 0; }
.decision h2 { border-top: none; margin-top: 0.25rem; padding-top: 0; }
.choices { display: grid; gap: 0.75rem; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); margin: 0.5rem 0 1rem; }
.choice { border: 1px solid var(--line); border-radius: 6px; padding: 0.75rem 1rem; }
.choice h4 { margin: 0 0 0.4rem; font-size: 1.05rem; }
.counts { display: grid; grid-template-columns: repeat(auto-fit, minmax(8.5rem, 1fr)); gap: 0.5rem; margin: 0.75rem 0; padding: 0; list-style: none; }
.counts li { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem; }
.counts .n { display: block; font-size: 1.6rem; font-weight: 800; font-variant-numeric: tabular-nums; }
.counts li.succeeded { border-color: var(--ok); }
.counts li.failed, .counts li.unknown { border-color: var(--bad); }
.counts li.skipped { border-color: var(--warn); }
progress { width: 100%; height: 0.9rem; }
.filters { display: flex; flex-wrap: wrap; gap: 0.4rem 0.9rem; margin: 0.5rem 0; padding: 0; list-style: none; }
.filters a[aria-current] { font-weight: 700; color: var(--ink); }
details { margin: 0.5rem 0; }
summary { cursor: pointer; font-weight: 600; }
summary.small { font-weight: 400; color: var(--muted); }

@media (max-width: 40rem) {
  main { padding: 0.5rem 0.75rem 2rem; }
  .site { padding: 0.5rem 0.75rem; }
  h1 { font-size: 1.35rem; }
  .env .name { font-size: 1.2rem; }
  .glance, .facts { grid-template-columns: 1fr; gap: 0.1rem; }
  .glance dd { margin-bottom: 0.4rem; }
  .facts dd { margin-bottom: 0.3rem; }
  th, td { padding: 0.35rem 0.5rem; }
  .change { min-width: 0; }
  td .pill { white-space: normal; overflow-wrap: anywhere; }
  button { width: 100%; }
  button.link { width: auto; }
}
@media print {
  .site nav, .skip, form { display: none; }
}
`

/**
 * Progressive enhancement only: every page works without it. While an operation runs, its counts are
 * refreshed every 2 seconds from the same service call the page rendered; when it ends, the page reloads.
 */
export const SCRIPT = `
(function () {
  'use strict';
  var root = document.querySelector('[data-live-operation]');
  if (!root || root.getAttribute('data-finished') === 'true') return;
  var url = root.getAttribute('data-status-url');
  var status = document.getElementById('live-status');
  var failures = 0;
  var format = function (n) { return Number(n).toLocaleString('en-US'); };
  var timer = setInterval(function () {
    fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
      .then(function (op) {
        failures = 0;
        Object.keys(op.counts).forEach(function (k) {
          var el = root.querySelector('[data-count="' + k + '"]');
          if (el) el.textContent = format(op.counts[k]);
          // The per-outcome filter links below the cards say the same counts.
          var link = document.querySelector('[data-filter-count="' + k + '"]');
          if (link) link.textContent = format(op.counts[k]);
        });
        var waiting = root.querySelector('[data-count="waiting"]');
        if (waiting) waiting.textContent = format((op.counts.pending || 0) + (op.counts.in_flight || 0));
        var state = root.querySelector('[data-state]');
        if (state) { state.textContent = op.state; state.className = 'pill ' + op.state; }
        var paused = root.querySelector('[data-paused]');
        if (paused) {
          paused.hidden = !op.paused;
          var why = paused.querySelector('[data-paused-text]');
          if (why) why.textContent = op.paused_text || '';
        }
        var limited = root.querySelector('[data-rate-limited]');
        if (limited && op.rate_limited_text) limited.textContent = op.rate_limited_text;
        var bar = root.querySelector('progress');
        if (bar) bar.value = op.target_count - (op.counts.pending || 0) - (op.counts.in_flight || 0);
        if (status) status.textContent = 'Updated ' + new Date().toISOString().slice(11, 19) + ' UTC';
        if (op.finished) {
          clearInterval(timer);
          if (status) status.textContent = 'The operation has ended; reloading the page for the final results.';
          window.location.reload();
        }
      })
      .catch(function () {
        failures += 1;
        if (failures >= 5) {
          clearInterval(timer);
          if (status) status.textContent = 'Live updates stopped (the gateway did not answer). Reload the page to see the latest counts.';
        }
      });
  }, 2000);
})();
`
