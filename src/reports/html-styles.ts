/** The HTML report's only styles, inlined: the file must show the same offline, mailed or archived. */
export const REPORT_STYLES = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1f2933; background: #f4f6f8; }
main { max-width: 960px; margin: 0 auto; padding: 32px 24px 64px; background: #fff; }
h1 { font-size: 28px; margin: 4px 0 16px; }
h2 { font-size: 22px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 2px solid #d9e0e6; }
h3 { font-size: 18px; margin: 32px 0 4px; }
h4 { font-size: 16px; margin: 20px 0 4px; }
h5 { font-size: 13px; margin: 12px 0 2px; text-transform: uppercase; letter-spacing: .04em; color: #52606d; }
.kicker { margin: 0; color: #52606d; text-transform: uppercase; letter-spacing: .08em; font-size: 13px; }
.cover { border-bottom: 4px solid #1f2933; padding-bottom: 16px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; }
.facts ul { margin: 0; padding-left: 18px; }
.note { background: #fff4e5; border-left: 4px solid #b35900; padding: 8px 12px; }
.mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; overflow-wrap: anywhere; }
.muted, .meta { color: #52606d; }
.meta { margin: 0 0 4px; font-size: 13px; }
.tiles { display: grid; grid-template-columns: repeat(5, 1fr); gap: 8px; margin: 12px 0 16px; }
.tile { color: #fff; border-radius: 6px; padding: 8px 12px; display: flex; flex-direction: column; }
.tile .count { font-size: 26px; font-weight: 700; }
.level-critical { background: #7a0019; } .level-high { background: #c0392b; } .level-medium { background: #b35900; }
.level-low { background: #2c6e9b; } .level-info { background: #5f6b76; }
.level { color: #fff; border-radius: 4px; padding: 1px 6px; font-size: 12px; vertical-align: middle; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e4e7eb; vertical-align: top; overflow-wrap: anywhere; }
table.compact { width: auto; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
.chart { margin: 0; } .chart figcaption { font-weight: 600; margin-bottom: 4px; }
.grade { display: inline-block; min-width: 24px; text-align: center; border-radius: 4px; color: #fff; font-weight: 700; }
.grade-a { background: #1e7b3a; } .grade-b { background: #5b8c1a; } .grade-c { background: #b35900; } .grade-d { background: #c0392b; } .grade-f { background: #7a0019; }
.target { border-top: 1px solid #d9e0e6; margin-top: 24px; }
.risk { border-left: 3px solid #d9e0e6; padding: 0 0 4px 12px; margin: 12px 0; }
.prose { white-space: pre-line; overflow-wrap: anywhere; margin: 0; }
.refs { margin: 0; padding-left: 18px; overflow-wrap: anywhere; }
.evidence { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; font-size: 13px; }
.evidence dt { color: #52606d; } .evidence dd { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace, Menlo, Consolas, monospace; }
.empty { color: #52606d; font-style: italic; }
a { color: #1a5b8c; }
@media print { body { background: #fff; } main { padding: 0; } .risk, tr { break-inside: avoid; } h3 { break-after: avoid; } }
`;
