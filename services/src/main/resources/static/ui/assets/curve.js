// The tuning curve of a schedule's page: best cost so far against trials, one series per strategy (uPlot).
// The data is the page's own (#curve-data); without JavaScript the trial table below says the same in numbers.
(function () {
  function draw() {
    var el = document.getElementById('curve'), data = document.getElementById('curve-data');
    if (!el || !data || el.dataset.drawn || typeof uPlot === 'undefined') return;
    var d = JSON.parse(data.textContent);
    var names = Object.keys(d.series);
    if (d.x.length === 0) { el.textContent = 'No measurement of this workload yet.'; return; }
    var colors = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df'];
    var series = [{label: 'trial'}], columns = [d.x];
    names.forEach(function (n, i) {
      var ys = d.series[n].slice();
      while (ys.length < d.x.length) ys.push(null);
      columns.push(ys);
      series.push({label: n, stroke: colors[i % colors.length], width: 2, spanGaps: false});
    });
    if (d.defaultCostUs != null) {
      columns.push(d.x.map(function () { return d.defaultCostUs; }));
      series.push({label: 'default', stroke: '#57606a', dash: [6, 4], width: 1});
    }
    el.dataset.drawn = '1';
    new uPlot({width: Math.min(el.clientWidth || 900, 1100), height: 280, series: series,
      axes: [{label: 'trials'}, {label: 'best cost (µs)'}], scales: {x: {time: false}}}, columns, el);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', draw); else draw();
  document.addEventListener('htmx:afterSettle', draw);
})();
