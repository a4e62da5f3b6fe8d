// The page's own CSS and script, inline so the report is one file that fetches nothing.

export const CSS = `
:root{--bg:#0f1419;--card:#171d24;--fg:#e6e9ee;--dim:#8a96a3;--line:#27313c;--good:#3fb950;--meh:#d29922;--bad:#f85149;--info:#58a6ff;--none:#6e7681}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
header{padding:18px 28px;border-bottom:1px solid var(--line);display:flex;gap:24px;align-items:baseline;flex-wrap:wrap}
h1{font-size:20px;margin:0}h2{font-size:15px;margin:0 0 10px;color:var(--dim);text-transform:uppercase;letter-spacing:.06em}
.meta{color:var(--dim)}.partial{background:#3d1d1f;color:#ffb4ad;padding:8px 28px;border-bottom:1px solid #6e2a2a}
section#nodes{overflow-x:auto}
main{padding:20px 28px;display:grid;gap:20px;grid-template-columns:repeat(12,1fr)}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px}
.span4{grid-column:span 4}.span8{grid-column:span 8}.span12{grid-column:span 12}.span6{grid-column:span 6}
.tiles{display:flex;gap:10px;flex-wrap:wrap}.tile{min-width:92px;padding:10px 12px;border-radius:6px;background:#1f2731;border-left:4px solid var(--none)}
.tile b{display:block;font-size:24px;line-height:1.1}.tile span{color:var(--dim);font-size:12px}
.bar{display:flex;height:14px;border-radius:7px;overflow:hidden;margin:12px 0 4px;background:#1f2731}.bar i{display:block}
.t-good{border-color:var(--good)}.t-meh{border-color:var(--meh)}.t-bad{border-color:var(--bad)}.t-info{border-color:var(--info)}.t-none{border-color:var(--none)}
.b-good{background:var(--good)}.b-meh{background:var(--meh)}.b-bad{background:var(--bad)}.b-info{background:var(--info)}.b-none{background:var(--none)}
.chip{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;background:#1f2731}
.c-good{color:var(--good)}.c-meh{color:var(--meh)}.c-bad{color:var(--bad)}.c-info{color:var(--info)}.c-none{color:var(--dim)}
ol.plan{margin:0;padding:0;list-style:none;counter-reset:s}ol.plan li{padding:8px 0;border-top:1px solid var(--line);display:grid;grid-template-columns:28px 78px 1fr;gap:8px}
ol.plan li:first-child{border-top:0}.num{color:var(--dim);font-weight:700}.nodes{color:var(--dim);font-size:12px;word-break:break-word}
ul.findings{margin:0;padding:0;list-style:none}ul.findings li{padding:6px 0;border-top:1px solid var(--line)}ul.findings li:first-child{border-top:0}
.fix{color:var(--dim);font-size:12px}code{font:12px ui-monospace,Menlo,monospace;color:var(--dim)}
.filters{display:flex;gap:10px;margin-bottom:10px;flex-wrap:wrap}select,input{background:#0f1419;color:var(--fg);border:1px solid var(--line);border-radius:5px;padding:5px 8px;font:inherit}
input{min-width:260px}table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:6px 8px;border-top:1px solid var(--line);vertical-align:top}
th{color:var(--dim);font-weight:600;font-size:12px;border-top:0}tr.node{cursor:pointer}tr.node:hover{background:#1c242e}tr.sel{background:#1f2a38}
td.note{color:var(--dim);font-size:12px;max-width:380px}.count{color:var(--dim);margin-left:auto}
#detail{margin-top:12px;white-space:pre-wrap;font:12px ui-monospace,Menlo,monospace;color:var(--fg);background:#0f1419;border-radius:6px;padding:10px;display:none}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}dt{color:var(--dim)}dd{margin:0;word-break:break-word}
`;

// Reads only the JSON data block and the DOM; writes with textContent, never innerHTML.
export const SCRIPT = `
(function(){
  var data = JSON.parse(document.getElementById('fleet-data').textContent);
  var byName = {};
  data.nodes.forEach(function(n){ byName[n.node] = n; });
  var phase = document.getElementById('f-phase'), verdict = document.getElementById('f-verdict'), text = document.getElementById('f-text');
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr.node'));
  var shown = document.getElementById('shown');
  function apply(){
    var p = phase.value, v = verdict.value, t = text.value.toLowerCase(), n = 0;
    rows.forEach(function(r){
      var ok = (!p || r.getAttribute('data-phase') === p) && (!v || r.getAttribute('data-verdict') === v) &&
        (!t || r.getAttribute('data-search').indexOf(t) !== -1);
      r.hidden = !ok; if (ok) n++;
    });
    shown.textContent = n + ' of ' + rows.length + ' nodes';
  }
  [phase, verdict].forEach(function(e){ e.addEventListener('change', apply); });
  text.addEventListener('input', apply);
  var detail = document.getElementById('detail');
  rows.forEach(function(r){
    r.addEventListener('click', function(){
      rows.forEach(function(x){ x.classList.remove('sel'); });
      r.classList.add('sel');
      var n = byName[r.getAttribute('data-node')];
      if (!n) return;
      var lines = [n.node + '  phase=' + (n.phase || 'no-report') + '  verdict=' + (n.verdict || 'no-report') + '  outcome=' + n.outcome];
      if (n.reason) lines.push('reason: ' + n.reason);
      n.findings.forEach(function(f){
        lines.push('');
        lines.push('[' + f.severity + '] ' + (f.title || f.id) + '  (' + f.id + ')');
        if (f.evidence) Object.keys(f.evidence).forEach(function(k){ lines.push('    ' + k + ': ' + JSON.stringify(f.evidence[k])); });
        if (f.remedy) lines.push('    fix: ' + f.remedy);
      });
      if (n.findings.length === 0) lines.push('no findings');
      detail.textContent = lines.join('\\n');
      detail.style.display = 'block';
    });
  });
  apply();
})();
`;
