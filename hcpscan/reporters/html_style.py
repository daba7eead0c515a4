"""The HTML report's one style sheet (its SHA-256 goes into the page's CSP, so the
browser applies exactly this text and nothing else)."""

CSS = """
:root{--critical:#7f1d1d;--high:#c81e1e;--medium:#b45309;--low:#1d4ed8;--info:#4b5563;
--pass:#15803d;--line:#d1d5db;--soft:#f3f4f6;--ink:#111827;--muted:#4b5563}
*{box-sizing:border-box}
body{margin:0;background:#f9fafb;color:var(--ink);font:15px/1.45 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:26px;margin:0}
h2{font-size:19px;margin:30px 0 10px;padding-bottom:4px;border-bottom:2px solid var(--line)}
h3{font-size:16px;margin:18px 0 8px}
h4{font-size:14px;margin:12px 0 4px}
code,pre{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:13px}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:10px;overflow-x:auto}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:8px 24px}
.headline{font-size:20px;font-weight:600;margin:0}
.exposure-line{margin:0;font-weight:600;padding:2px 10px;border-radius:4px}
.exposure-line.alert{background:#fde8e8;color:#9b1c1c}.exposure-line.calm{background:#e7f6ec;color:#166534}
.exposure-line.unknown{background:#eef0f3;color:#374151}
.facts{display:flex;flex-wrap:wrap;gap:4px 22px;margin:4px 0 0;width:100%;color:var(--muted);font-size:13px}
.facts div{display:flex;gap:6px}.facts dt{font-weight:600}.facts dd{margin:0;word-break:break-all}
.cards{display:grid;grid-template-columns:repeat(5,1fr);gap:12px}
.card{background:#fff;border:1px solid var(--line);border-top:6px solid;border-radius:8px;
padding:10px 14px;display:flex;flex-direction:column}
.card .count{font-size:34px;font-weight:700;line-height:1.1}
.card .label{text-transform:uppercase;font-size:12px;letter-spacing:.06em;color:var(--muted);font-weight:600}
.card .sup{font-size:12px;color:var(--muted)}
.sev-critical{border-top-color:var(--critical)}.card.sev-critical .count{color:var(--critical)}
.sev-high{border-top-color:var(--high)}.card.sev-high .count{color:var(--high)}
.sev-medium{border-top-color:var(--medium)}.card.sev-medium .count{color:var(--medium)}
.sev-low{border-top-color:var(--low)}.card.sev-low .count{color:var(--low)}
.sev-info{border-top-color:var(--info)}.card.sev-info .count{color:var(--info)}
.badge{display:inline-block;min-width:64px;text-align:center;border-radius:4px;padding:1px 6px;
color:#fff;font-size:12px;font-weight:700;text-transform:uppercase}
.badge.sev-critical{background:var(--critical)}.badge.sev-high{background:var(--high)}
.badge.sev-medium{background:var(--medium)}.badge.sev-low{background:var(--low)}
.badge.sev-info{background:var(--info)}
.bar{width:100%;height:22px;border-radius:4px;background:var(--soft)}
.st-fail{fill:var(--high);color:var(--high)}.st-pass{fill:var(--pass);color:var(--pass)}
.st-not-evaluable{fill:var(--medium);color:var(--medium)}
.st-not-applicable{fill:#9ca3af;color:#6b7280}.st-suppressed{fill:#6b7280;color:#374151}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:6px 22px;padding:0;margin:8px 0}
.legend li{display:flex;align-items:center;gap:6px}.legend b{color:var(--ink);font-size:16px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;background:currentColor}
table{border-collapse:collapse;width:100%;background:#fff;font-size:14px;margin:6px 0}
th,td{border:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td code{word-break:break-all}
td:first-child code{white-space:nowrap;word-break:normal}
.reasons td:nth-child(-n+2){white-space:nowrap;width:1%}
.key{list-style:none;display:flex;gap:22px;padding:0;margin:4px 0 8px;font-size:13px}
.key li::before{content:"";display:inline-block;width:22px;height:0;margin-right:6px;
vertical-align:middle;border-top:3px solid}
.key .open::before{border-color:#c81e1e}.key .workers::before{border-color:#15803d}
.key .blocked::before{border-top-style:dashed;border-color:#9ca3af}
.hc{background:#fff;border:1px solid var(--line);border-radius:8px;padding:6px 14px 10px;margin:10px 0}
svg.exposure{display:block;font-size:13px}
svg.exposure text{fill:var(--ink)}
svg.exposure .col{font-weight:700;fill:var(--muted);font-size:12px;text-transform:uppercase;
letter-spacing:.04em}
svg.exposure .strong{font-weight:600}svg.exposure .small{font-size:12px;fill:var(--muted)}
svg.exposure .edge{font-size:12px;font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:4px;
stroke-linejoin:round}
svg.exposure .edge.open{fill:#c81e1e}svg.exposure .edge.workers{fill:#15803d}
svg.exposure .edge.blocked{fill:#6b7280}
tr.open td:first-child{border-left:4px solid #c81e1e}tr.workers td:first-child{border-left:4px solid #15803d}
tr.blocked td:first-child{border-left:4px dashed #9ca3af}
details>summary{cursor:pointer}
.rule{background:#fff;border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:8px 14px}
.rule>summary{font-weight:600;font-size:15px}
.n{color:var(--muted);font-weight:400}
.docs{margin:6px 0 4px;padding:4px 10px;background:var(--soft);border-radius:6px}
.docs>summary{color:var(--low);font-size:13px}
.docs p{margin:4px 0}
.items{padding-left:22px;margin:6px 0}
.finding{margin:8px 0;padding-bottom:6px;border-bottom:1px solid var(--soft)}
.finding p{margin:2px 0}
.obj{font-weight:600}.at{color:var(--muted);font-size:13px}.at code{word-break:break-all}
.field{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;background:var(--soft);
padding:0 4px;border-radius:3px;margin-left:6px}
.evidence{margin:4px 0;padding-left:18px;color:#374151;font-size:13.5px}
.evidence li{margin:2px 0;word-break:break-word}
.fix summary{cursor:pointer;font-size:13.5px;color:#065f46}
.nofix{font-size:13.5px;color:#6b7280}
.diff{overflow-x:auto;font-size:12.5px;background:#f9fafb;padding:6px}
.diff .add{color:#065f46;background:#ecfdf5;display:block}
.diff .del{color:#991b1b;background:#fef2f2;display:block}
.diff .ctx{display:block}
.note{color:var(--muted);font-size:13px}
@media print{body{background:#fff}details{display:block}.rule,.hc{break-inside:avoid}}
""".strip()
