/**
 * The dashboard's one stylesheet, served as a static file from
 * /dashboard/assets (the CSP allows styles from 'self' only, never inline).
 * It lives in a module so that the compiled service carries it in dist/.
 */
export const STYLESHEET = `
:root {
  --ink: #1c2430;
  --ink-muted: #556070;
  --line: #d9dee5;
  --surface: #ffffff;
  --page: #f4f6f9;
  --accent: #1f5fbf;
  --accent-dark: #174a96;
  --danger: #b42318;
  --danger-dark: #8f1c13;
  --ok: #18794e;
  --focus: #f5a623;
  --radius: 6px;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 16px;
  line-height: 1.5;
  color: var(--ink);
  background: var(--page);
}

* { box-sizing: border-box; }
body { margin: 0; }
h1, h2, h3 { line-height: 1.25; margin: 0 0 .75rem; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; }
p { margin: 0 0 1rem; }
.prose { white-space: pre-line; max-width: 60rem; }
a { color: var(--accent); }
a:hover { color: var(--accent-dark); }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
pre { background: var(--page); border: 1px solid var(--line); border-radius: var(--radius); padding: .75rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; }

:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }

.skip-link { position: absolute; left: .5rem; top: -3rem; z-index: 10; background: var(--surface); color: var(--ink); padding: .5rem .75rem; border-radius: var(--radius); }
.skip-link:focus { top: .5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

.topbar { background: var(--ink); color: #fff; }
.topbar-inner { max-width: 80rem; margin: 0 auto; padding: .5rem 1.5rem; display: flex; align-items: center; gap: 1.25rem; flex-wrap: wrap; }
.brand { display: flex; align-items: center; gap: .5rem; font-weight: 700; font-size: 1.15rem; color: #fff; text-decoration: none; }
.brand img { width: 1.5rem; height: 1.5rem; }
.topbar nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .15rem; margin: 0; padding: 0; }
.topbar nav a { display: block; color: #d6dde8; text-decoration: none; padding: .45rem .6rem; border-radius: var(--radius); font-size: .95rem; white-space: nowrap; }
.topbar nav a:hover { color: #fff; background: rgba(255, 255, 255, .08); }
.topbar nav a[aria-current="page"] { color: #fff; background: rgba(255, 255, 255, .16); font-weight: 600; }
.account { margin-left: auto; display: flex; align-items: center; gap: .75rem; color: #d6dde8; font-size: .9rem; }
.account strong { color: #fff; }
.account a { color: #fff; }
.account a:focus-visible { outline: 2px solid #fff; outline-offset: 2px; }
.account form { margin: 0; }

main { max-width: 80rem; margin: 0 auto; padding: 2rem 1.5rem 4rem; }
main:focus { outline: none; }
.narrow { max-width: 28rem; }
.lead { color: var(--ink-muted); max-width: 48rem; }
.panel { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); padding: 1.25rem 1.5rem; margin-bottom: 1.5rem; }
.panel > h2:first-child { margin-top: 0; }
.breadcrumb { margin-bottom: .5rem; font-size: .95rem; }

.notice { border-radius: var(--radius); padding: .75rem 1rem; margin-bottom: 1.5rem; border: 1px solid; }
.notice-ok { background: #e9f6ef; border-color: #a6d9bd; color: #0f5132; }
.notice-error { background: #fdecea; border-color: #f1aca5; color: var(--danger-dark); }
.notice-secret { background: #fff8e6; border-color: #f0cf7a; color: var(--ink); }
.notice-secret h2 { margin-top: 0; }

form.stack { display: grid; gap: 1rem; max-width: 32rem; }
.field { display: grid; gap: .3rem; }
.field-row { display: flex; gap: 1rem; flex-wrap: wrap; align-items: flex-end; }
.field-row .field { min-width: 11rem; }
label { font-weight: 600; font-size: .95rem; }
.hint { color: var(--ink-muted); font-size: .875rem; font-weight: 400; }
input[type="text"], input[type="password"], input[type="url"], input[type="search"], select, textarea {
  font: inherit; color: var(--ink); background: var(--surface); border: 1px solid #aab3bf; border-radius: var(--radius); padding: .5rem .65rem; width: 100%;
}
textarea { min-height: 6rem; resize: vertical; }
input[readonly] { background: var(--page); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
[aria-invalid="true"] { border-color: var(--danger); }
.field-error { color: var(--danger-dark); font-weight: 600; }

.button { display: inline-block; font: inherit; font-weight: 600; border-radius: var(--radius); border: 1px solid var(--accent); background: var(--accent); color: #fff; padding: .5rem 1rem; cursor: pointer; text-decoration: none; line-height: 1.5; }
.button:hover { background: var(--accent-dark); border-color: var(--accent-dark); color: #fff; }
.button-secondary { background: var(--surface); color: var(--accent); }
.button-secondary:hover { background: #eaf1fb; color: var(--accent-dark); }
.button-danger { background: var(--surface); color: var(--danger); border-color: var(--danger); }
.button-danger:hover { background: var(--danger); color: #fff; border-color: var(--danger); }
.button-small { padding: .25rem .65rem; font-size: .875rem; }
.button-quiet { background: transparent; border-color: rgba(255, 255, 255, .4); color: #fff; padding: .3rem .75rem; font-size: .875rem; }
.button-quiet:hover { background: rgba(255, 255, 255, .12); border-color: #fff; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; align-items: center; margin: 1rem 0; }
.actions form { margin: 0; }

table { width: 100%; border-collapse: collapse; background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); font-size: .95rem; }
caption { text-align: left; font-weight: 600; padding: 0 0 .5rem; color: var(--ink-muted); }
th, td { text-align: left; padding: .6rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: #eef1f5; font-size: .85rem; text-transform: uppercase; letter-spacing: .03em; color: var(--ink-muted); }
tbody th { font-weight: 600; }
tbody tr:last-child > * { border-bottom: none; }
td form { margin: 0; }
.table-wrap { overflow-x: auto; margin-bottom: 1.5rem; }
.empty { color: var(--ink-muted); font-style: italic; }

.badge { display: inline-block; border-radius: 999px; padding: .05rem .6rem; font-size: .8rem; font-weight: 700; letter-spacing: .02em; white-space: nowrap; border: 1px solid transparent; }
.badge-critical { background: #7a1111; color: #fff; }
.badge-high { background: #d93b22; color: #fff; }
.badge-medium { background: #f6c344; color: #3d2c00; }
.badge-low { background: #dbe8fb; color: #163e7a; }
.badge-info { background: #e8ebef; color: #3f4854; }
.badge-open { background: #fff; color: var(--danger); border-color: var(--danger); }
.badge-closed { background: #fff; color: var(--ok); border-color: var(--ok); }
.badge-accepted { background: #e9f6ef; color: #0f5132; border-color: #a6d9bd; }
.badge-revoked { background: #e8ebef; color: #3f4854; }
.badge-active { background: #e9f6ef; color: #0f5132; }
.badge-failed { background: #fdecea; color: var(--danger-dark); }

dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1.5rem; margin: 0; }
dl.facts dt { font-weight: 600; color: var(--ink-muted); }
dl.facts dd { margin: 0; word-break: break-word; }
dl.counts { display: flex; gap: 1rem; flex-wrap: wrap; margin: 0 0 1rem; }
dl.counts div { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); padding: .5rem 1rem; min-width: 8rem; }
dl.counts dt { font-size: .85rem; color: var(--ink-muted); }
dl.counts dd { margin: 0; font-size: 1.4rem; font-weight: 700; }

.pagination { display: flex; gap: 1rem; margin-top: 1rem; }

.badge-state-queued, .badge-state-stopping { background: #e8ebef; color: #3f4854; }
.badge-state-running { background: #dbe8fb; color: #163e7a; }
.badge-state-succeeded { background: #e9f6ef; color: #0f5132; }
.badge-state-failed { background: #fdecea; color: var(--danger-dark); }
.badge-state-stopped, .badge-state-over-limit { background: #fff8e6; color: #5c4300; border-color: #f0cf7a; }
.badge-list { display: inline-flex; gap: .25rem; flex-wrap: wrap; }
.grade { display: inline-block; min-width: 1.6rem; text-align: center; border-radius: var(--radius); font-weight: 700; padding: 0 .35rem; }
.grade-a { background: #e9f6ef; color: #0f5132; }
.grade-b { background: #eef6d8; color: #3b5207; }
.grade-c { background: #fff3cd; color: #5c4300; }
.grade-d { background: #fde4d2; color: #7a2e05; }
.grade-f { background: #fdecea; color: var(--danger-dark); }
.tag { display: inline-block; background: #eef1f5; color: var(--ink); border-radius: 999px; padding: 0 .55rem; font-size: .85rem; text-decoration: none; margin: 0 .15rem .15rem 0; }
.tag:hover { background: #dde3ea; }

.overview-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 0 1.5rem; align-items: start; }
.chart-pair { display: flex; gap: 2rem; flex-wrap: wrap; align-items: flex-start; }
table.compact { width: auto; min-width: 14rem; }
table.compact th, table.compact td { padding: .3rem .75rem; }
.chart { max-width: 100%; height: auto; display: block; margin-bottom: 1rem; }
.chart text { font-family: inherit; font-size: 13px; fill: var(--ink); }
.chart .chart-tick { fill: var(--ink-muted); font-size: 12px; }
.chart .chart-grid { stroke: var(--line); stroke-width: 1; }
.bar-critical { fill: #7a1111; }
.bar-high { fill: #d93b22; }
.bar-medium { fill: #e0a100; }
.bar-low { fill: #4a7fd4; }
.bar-info { fill: #8a94a3; }
.bar-opened, .swatch-opened { fill: #d93b22; background: #d93b22; }
.bar-closed, .swatch-closed { fill: #18794e; background: #18794e; }
.legend { list-style: none; display: flex; gap: 1.25rem; padding: 0; margin: 0 0 .5rem; font-size: .9rem; }
.swatch { display: inline-block; width: .9rem; height: .9rem; border-radius: 2px; margin-right: .4rem; vertical-align: -.1rem; }
dl.grades dt { font-size: 1rem; }

fieldset { border: 1px solid var(--line); border-radius: var(--radius); padding: .75rem 1rem 1rem; margin: 0; min-width: 0; }
legend { font-weight: 700; padding: 0 .35rem; }
.stack-fieldset { display: grid; gap: 1rem; }
.checkbox-group { border: none; padding: 0; }
.checkbox-group legend { font-weight: 600; font-size: .95rem; padding: 0; }
.checkboxes { display: flex; flex-wrap: wrap; gap: .35rem 1.25rem; }
label.checkbox { font-weight: 400; display: inline-flex; gap: .4rem; align-items: center; }
form.wide { max-width: 40rem; }
.conditions { padding-left: 1.25rem; }
.conditions li { margin-bottom: .75rem; }
.conditions p { margin: 0; }
.danger-zone { border-color: #f1aca5; }
.sign-in-page main { padding-top: 4rem; }

fieldset.field { border: 0; padding: 0; margin: 0; }
fieldset.field legend { font-weight: 600; padding: 0; margin-bottom: .3rem; }
.checks { display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
.checks label { display: inline-flex; gap: .3rem; align-items: center; font-weight: normal; }
`;
