// The page's own CSS and script, inline so the report is one file that fetches nothing.

export const CSS = `
:root{--bg:#f6f7f9;--card:#fff;--fg:#1f2328;--dim:#59636e;--line:#d8dee4;--good:#1a7f37;--meh:#9a6700;--bad:#cf222e;--info:#0969da;--none:#6e7781;--soft:#eef1f4}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
header{padding:16px 28px;border-bottom:1px solid var(--line);background:var(--card);display:flex;gap:20px;align-items:baseline;flex-wrap:wrap}
h1{font-size:20px;margin:0}h2{font-size:13px;margin:0 0 10px;color:var(--dim);text-transform:uppercase;letter-spacing:.06em}
.meta{color:var(--dim)}.partial{background:#ffebe9;color:#82071e;padding:8px 28px;border-bottom:1px solid #ffcecb}
.actions{margin-left:auto;display:flex;gap:8px}
button{font:inherit;background:var(--card);color:var(--fg);border:1px solid var(--line);border-radius:6px;padding:4px 12px;cursor:pointer}
button:hover{background:var(--soft)}
main{padding:20px 28px;display:grid;gap:16px;grid-template-columns:repeat(12,1fr)}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px;min-width:0}
.span4{grid-column:span 4}.span8{grid-column:span 8}.span12{grid-column:span 12}.span6{grid-column:span 6}
.headline{display:grid;grid-template-columns:repeat(3,max-content) 1fr;gap:28px;align-items:center}
.big b{display:block;font-size:40px;line-height:1}.big span{display:block;font-weight:600}.big small{color:var(--dim)}
.big.bad b{color:var(--bad)}
.timeline{position:relative;height:104px;margin:0 50px 0 20px}
.timeline .axis{position:absolute;left:0;right:0;top:43px;height:6px;border-radius:3px;background:linear-gradient(90deg,var(--good) 0%,var(--meh) 30%,var(--bad) 90%)}
.stage{position:absolute;top:0;transform:translateX(-50%);text-align:center;width:150px;font-size:12px;line-height:1.25;white-space:nowrap}
.stage b{display:block}.stage span{display:block;color:var(--dim)}
.stage::after{content:"";display:block;width:2px;height:9px;background:var(--fg);margin:2px auto 0}
.here{position:absolute;top:35px;transform:translateX(-50%);text-align:center;font-size:12px;color:var(--info);white-space:nowrap;line-height:1.25}
.here::before{content:"";display:block;width:18px;height:18px;border-radius:50%;background:var(--info);border:3px solid #fff;box-shadow:0 0 0 1px var(--info);margin:0 auto 4px}
.here span{display:block;font-weight:700;text-transform:uppercase;letter-spacing:.05em}.here b{display:block}
.when-unknown{position:absolute;top:40px;left:0;right:0;text-align:center;font-size:12px;color:var(--dim)}
.burn{display:flex;align-items:flex-end;gap:2px;height:140px;border-bottom:1px solid var(--line);margin-bottom:6px}
.burn .col{flex:1;display:flex;flex-direction:column-reverse;height:100%;min-width:2px}.burn i{display:block}
.tiles{display:flex;gap:10px;flex-wrap:wrap}.tile{min-width:92px;padding:8px 12px;border-radius:6px;background:var(--soft);border-left:4px solid var(--none)}
.tile b{display:block;font-size:22px;line-height:1.1}.tile span{color:var(--dim);font-size:12px}
.bar{display:flex;height:12px;border-radius:6px;overflow:hidden;margin:12px 0 4px;background:var(--soft)}.bar i{display:block}
.t-good{border-color:var(--good)}.t-meh{border-color:var(--meh)}.t-bad{border-color:var(--bad)}.t-info{border-color:var(--info)}.t-none{border-color:var(--none)}
.b-good{background:var(--good)}.b-meh{background:#d4a72c}.b-bad{background:var(--bad)}.b-info{background:#54aeff}.b-none{background:#afb8c1}
.chip{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;font-weight:600;background:var(--soft)}
.c-good{color:var(--good)}.c-meh{color:var(--meh)}.c-bad{color:var(--bad)}.c-info{color:var(--info)}.c-none{color:var(--dim)}
ol.plan{margin:0;padding:0;list-style:none}ol.plan li{padding:8px 0;border-top:1px solid var(--line);display:grid;grid-template-columns:28px 78px 1fr;gap:8px}
ol.plan li:first-child{border-top:0}.num{color:var(--dim);font-weight:700}.nodes{color:var(--dim);font-size:12px;word-break:break-word}
ul.findings{margin:0;padding:0;list-style:none}ul.findings li{padding:6px 0;border-top:1px solid var(--line)}ul.findings li:first-child{border-top:0}
.fix{color:var(--dim);font-size:12px}code{font:12px ui-monospace,Menlo,monospace;color:var(--dim)}
a.page{color:var(--info);font:12px ui-monospace,Menlo,monospace}
.ev{font:12px ui-monospace,Menlo,monospace;background:var(--soft);border-radius:4px;padding:4px 8px;margin:4px 0;word-break:break-word}.ev span{color:var(--dim)}
.filters{display:flex;gap:10px;margin-bottom:8px;flex-wrap:wrap;align-items:center}select,input{background:var(--card);color:var(--fg);border:1px solid var(--line);border-radius:5px;padding:4px 8px;font:inherit}
input{min-width:260px}.count{color:var(--dim);margin-left:auto}
.pool{overflow-x:auto}.pool h2{text-transform:none;letter-spacing:0;font-size:15px;color:var(--fg)}
table{width:100%;border-collapse:collapse;margin-top:8px;table-layout:fixed}
col.c-node{width:25%}col.c-phase,col.c-verdict,col.c-worst{width:8%}col.c-findings{width:17%}col.c-kubelet{width:9%}col.c-kernel{width:14%}col.c-os{width:11%}
td{overflow-wrap:anywhere}th,td{text-align:left;padding:5px 8px;border-top:1px solid var(--line);vertical-align:top}
th{border-top:0}th button{border:0;padding:0;background:none;color:var(--dim);font-weight:600;font-size:12px}th button::after{content:" ↕";color:var(--line)}
th button[data-dir="asc"]::after{content:" ↑";color:var(--fg)}th button[data-dir="desc"]::after{content:" ↓";color:var(--fg)}
tr.node{cursor:pointer}tr.node:hover{background:var(--soft)}tr.node[aria-expanded="true"]{background:#ddf4ff}
tr.detail td{background:#fbfcfd;border-top:0;padding:8px 16px 12px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}dt{color:var(--dim)}dd{margin:0;word-break:break-word}
@media (max-width:900px){.span4,.span6,.span8{grid-column:span 12}.headline{grid-template-columns:repeat(3,1fr)}.timeline{grid-column:span 3}}
@media print{
  body{background:#fff;font-size:11px}header{border:0;padding:0 0 8px}.actions,.filters,#nodes .meta{display:none}
  main{display:block;padding:0}section{border:0;border-top:1px solid #999;border-radius:0;padding:8px 0;margin:0 0 8px;break-inside:avoid-page}
  .pool{break-inside:auto}tr{break-inside:avoid}
  tr.detail td{background:#fff}a.page::after{content:" (" attr(href) ")"}th button::after{content:""}
  .bar,.timeline .axis,.b-good,.b-meh,.b-bad,.b-info,.b-none,.here::before{print-color-adjust:exact;-webkit-print-color-adjust:exact}
}
`;

// Reads only the JSON data block and the DOM; writes with textContent and attributes, never innerHTML.
export const SCRIPT = `
(function(){
  var data = JSON.parse(document.getElementById('fleet-data').textContent);
  var phase = document.getElementById('f-phase'), verdict = document.getElementById('f-verdict'), text = document.getElementById('f-text');
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr.node'));
  var shown = document.getElementById('shown');
  function detailOf(r){ return r.nextElementSibling; }
  function apply(){
    var p = phase.value, v = verdict.value, t = text.value.toLowerCase(), n = 0;
    rows.forEach(function(r){
      var ok = (!p || r.getAttribute('data-phase') === p) && (!v || r.getAttribute('data-verdict') === v) &&
        (!t || r.getAttribute('data-search').indexOf(t) !== -1);
      r.hidden = !ok; if (ok) n++;
      if (!ok) detailOf(r).hidden = true; else detailOf(r).hidden = r.getAttribute('aria-expanded') !== 'true';
    });
    shown.textContent = n + ' of ' + rows.length + ' nodes';
  }
  [phase, verdict].forEach(function(e){ e.addEventListener('change', apply); });
  text.addEventListener('input', apply);
  function toggle(r){
    var open = r.getAttribute('aria-expanded') !== 'true';
    r.setAttribute('aria-expanded', open ? 'true' : 'false');
    detailOf(r).hidden = !open;
  }
  rows.forEach(function(r){
    r.addEventListener('click', function(){ toggle(r); });
    r.addEventListener('keydown', function(e){ if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(r); } });
  });
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function(table){
    var buttons = table.querySelectorAll('th button');
    Array.prototype.forEach.call(buttons, function(b){
      b.addEventListener('click', function(){
        var col = Number(b.getAttribute('data-col')), dir = b.getAttribute('data-dir') === 'asc' ? 'desc' : 'asc';
        Array.prototype.forEach.call(buttons, function(x){ x.removeAttribute('data-dir'); });
        b.setAttribute('data-dir', dir);
        var body = table.tBodies[0];
        var pairs = Array.prototype.slice.call(body.querySelectorAll('tr.node')).map(function(r){ return [r, detailOf(r)]; });
        pairs.sort(function(a, c){
          var x = a[0].cells[col].getAttribute('data-s'), y = c[0].cells[col].getAttribute('data-s');
          var d = x.localeCompare(y, undefined, { numeric: true });
          return dir === 'asc' ? d : -d;
        });
        pairs.forEach(function(pr){ body.appendChild(pr[0]); body.appendChild(pr[1]); });
      });
    });
  });
  document.getElementById('csv').addEventListener('click', function(){
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([data.csv], { type: 'text/csv' }));
    a.download = 'proxyscope-fleet.csv';
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function(){ URL.revokeObjectURL(a.href); }, 1000);
  });
  document.getElementById('print').addEventListener('click', function(){ window.print(); });
  window.addEventListener('beforeprint', function(){ rows.forEach(function(r){ if (!r.hidden) detailOf(r).hidden = false; }); });
  window.addEventListener('afterprint', apply);
  apply();
})();
`;
