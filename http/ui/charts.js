// Cairn web UI: the charts. Chart.js (Debian's libjs-chart.js, served by
// cairnd) for the optimization history and learning curves; plain canvas
// for the plots that must stay fast with 10,000 trials (parallel
// coordinates, slices, Pareto front). Every chart canvas gets
// data-points="N": the number of points it drew (the browser test reads it).
'use strict';

const CairnCharts = (() => {
  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

  function extent(values) {
    let lo = Infinity, hi = -Infinity;
    for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (lo === hi) { lo -= 0.5; hi += 0.5; }
    return [lo, hi];
  }

  function fmt(v) {
    if (typeof v !== 'number') return String(v);
    const a = Math.abs(v);
    return (a !== 0 && (a < 1e-3 || a >= 1e5)) ? v.toExponential(2) : String(+v.toPrecision(4));
  }

  // Tick values of a log axis over [lo, hi] (lo > 0): the powers of ten
  // inside it, or lo and hi when there are fewer than two.
  function logTicks(lo, hi) {
    const out = [];
    for (let e = Math.ceil(Math.log10(lo) - 1e-9); e <= Math.floor(Math.log10(hi) + 1e-9); e++) out.push(Math.pow(10, e));
    return out.length >= 2 ? out : [lo, hi];
  }

  function prepare(canvas, width, height) {
    const ratio = window.devicePixelRatio || 1;
    canvas.width = width * ratio; canvas.height = height * ratio;
    canvas.style.width = width + 'px'; canvas.style.height = height + 'px';
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = '11px sans-serif';
    return ctx;
  }

  // series: [{points: [[x, y], ...], color, line, label}]; x values may be
  // category strings when opts.categories is given.
  function scatter(canvas, series, opts) {
    const W = opts.width || 320, H = opts.height || 240, L = 48, R = 8, T = 8, B = 30;
    const ctx = prepare(canvas, W, H);
    const cats = opts.categories || null;
    const xs = [], ys = [];
    for (const s of series) for (const p of s.points) {
      xs.push(cats ? cats.indexOf(p[0]) : (opts.logx ? Math.log10(p[0]) : p[0])); ys.push(p[1]);
    }
    const [x0, x1] = cats ? [-0.5, cats.length - 0.5] : extent(xs);
    const [y0, y1] = extent(ys);
    const sx = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
    const sy = (y) => H - B - (y - y0) / (y1 - y0) * (H - T - B);
    ctx.strokeStyle = '#999'; ctx.fillStyle = '#444';
    ctx.strokeRect(L, T, W - L - R, H - T - B);
    ctx.textAlign = 'right';
    for (let i = 0; i <= 4; i++) { const y = y0 + (y1 - y0) * i / 4; ctx.fillText(fmt(y), L - 3, sy(y) + 4); }
    ctx.textAlign = 'center';
    if (cats) { cats.forEach((c, i) => ctx.fillText(String(c).slice(0, 10), sx(i), H - B + 12)); }
    else {
      const ticks = opts.logx ? logTicks(Math.pow(10, x0), Math.pow(10, x1)).map(Math.log10) :
        [0, 1, 2, 3].map((i) => x0 + (x1 - x0) * i / 3);
      const labels = ticks.map((x) => fmt(opts.logx ? Math.pow(10, x) : x));
      ticks.forEach((x, i) => ctx.fillText(labels[i], sx(x), H - B + 12));
      canvas.dataset.xticks = JSON.stringify(labels);
      canvas.dataset.xscale = opts.logx ? 'log' : 'linear';
    }
    if (opts.xlabel) ctx.fillText(opts.xlabel, (L + W) / 2, H - 4);
    let n = 0, k = 0;
    for (const s of series) {
      ctx.fillStyle = s.color || COLORS[0]; ctx.strokeStyle = s.color || COLORS[0];
      if (s.line) {
        ctx.beginPath();
        s.points.forEach((p, i) => { const x = sx(xs[k + i]), y = sy(p[1]); i ? ctx.lineTo(x, y) : ctx.moveTo(x, y); });
        ctx.stroke();
      } else {
        ctx.beginPath();  // One path for all points: fast at 10,000.
        for (let i = 0; i < s.points.length; i++) ctx.rect(sx(xs[k + i]) - 1.5, sy(s.points[i][1]) - 1.5, 3, 3);
        ctx.fill();
      }
      n += s.points.length; k += s.points.length;
    }
    canvas.dataset.points = String(n);
    return n;
  }

  // The position in [0, 1] and the tick values of one axis of `parallel`.
  function axisScale(d) {
    if (d.categories) {
      const at = (v) => (d.categories.indexOf(v) + 0.5) / d.categories.length;
      return {at, ticks: d.categories.map((c) => [at(c), String(c).slice(0, 12)])};
    }
    const nums = d.values.filter((v) => typeof v === 'number' && isFinite(v) && (!d.log || v > 0));
    if (d.log) {
      const [lo, hi] = extent(nums.map(Math.log10));
      const at = (v) => (Math.log10(v) - lo) / (hi - lo);
      const ticks = logTicks(Math.pow(10, lo), Math.pow(10, hi)).map((v) => [at(v), fmt(v)]);
      return {at, ticks};
    }
    const [lo, hi] = extent(nums);
    const at = (v) => (v - lo) / (hi - lo);
    return {at, ticks: [lo, (lo + hi) / 2, hi].map((v) => [at(v), fmt(v)])};
  }

  // dims: [{name, values (numbers, or strings with categories), log}];
  // color by the last dimension (the objective), best (per
  // `lowerIsBetter`) darkest. A log dimension gets a log axis. Each axis
  // is labelled with its ticks; canvas.dataset.axes records them (name,
  // scale, [label, y in px]) for tests.
  function parallel(canvas, dims, lowerIsBetter, width, height) {
    const W = width, H = height, T = 20, B = 20, L = 48, R = 48;
    const ctx = prepare(canvas, W, H);
    const n = dims.length ? dims[0].values.length : 0;
    const scales = dims.map(axisScale);
    const ax = (i) => L + i * (W - L - R) / Math.max(1, dims.length - 1);
    const py = (u) => H - B - u * (H - T - B);
    const obj = dims[dims.length - 1];
    const [o0, o1] = extent(obj ? obj.values : []);
    ctx.globalAlpha = n > 2000 ? 0.15 : 0.5;
    // Lines bucketed by colour (a colour change per bucket, not per line).
    const BUCKETS = 24;
    const buckets = Array.from({length: BUCKETS}, () => []);
    for (let t = 0; t < n; t++) {
      let q = (obj.values[t] - o0) / (o1 - o0);
      if (!lowerIsBetter) q = 1 - q;
      buckets[Math.min(BUCKETS - 1, Math.max(0, Math.floor(q * BUCKETS)))].push(t);
    }
    const ys = dims.map((d, i) => d.values.map((v) => py(scales[i].at(v))));
    buckets.forEach((ts, b) => {
      if (!ts.length) return;
      ctx.strokeStyle = `hsl(${Math.round(220 - 200 * (b + 0.5) / BUCKETS)}, 70%, 45%)`;
      for (const t of ts) {
        ctx.beginPath();  // A path per line: no self-intersecting giant path.
        for (let i = 0; i < dims.length; i++) i ? ctx.lineTo(ax(i), ys[i][t]) : ctx.moveTo(ax(i), ys[i][t]);
        ctx.stroke();
      }
    });
    ctx.globalAlpha = 1; ctx.strokeStyle = '#333'; ctx.fillStyle = '#222';
    const axes = dims.map((d, i) => {
      ctx.beginPath(); ctx.moveTo(ax(i), T); ctx.lineTo(ax(i), H - B); ctx.stroke();
      ctx.textAlign = 'center';
      ctx.fillText(d.name + (d.log ? ' (log)' : ''), ax(i), 12);
      ctx.textAlign = 'right';
      const ticks = scales[i].ticks.map(([u, label]) => {
        const y = py(u);
        ctx.beginPath(); ctx.moveTo(ax(i) - 3, y); ctx.lineTo(ax(i), y); ctx.stroke();
        ctx.fillText(label, ax(i) - 4, y + 4);
        return [label, Math.round(y * 10) / 10];
      });
      return {name: d.name, scale: d.categories ? 'category' : d.log ? 'log' : 'linear', ticks};
    });
    canvas.dataset.axes = JSON.stringify(axes);
    canvas.dataset.points = String(n);
    return n;
  }

  // The optimization history: objective per trial (points) and best so far
  // (a line). Chart.js up to 2,000 points; beyond (Chart.js takes about a
  // second per 3,000 points) or without Chart.js, the canvas scatter.
  function history(canvas, points, best, label, old) {
    if (old) old.destroy();
    if (!window.Chart || points.length > 2000) {
      scatter(canvas, [{points}, {points: best, line: true, color: COLORS[1]}], {width: 640, height: 300, xlabel: 'trial'});
      canvas.dataset.points = String(points.length);
      return null;
    }
    canvas.dataset.points = String(points.length);
    const data = (ps) => ps.map((p) => ({x: p[0], y: p[1]}));
    return new Chart(canvas, {
      type: 'scatter',
      data: {datasets: [
        {label, data: data(points), pointRadius: 2, backgroundColor: COLORS[0]},
        {label: 'best so far', data: data(best), type: 'line', borderColor: COLORS[1], pointRadius: 0, stepped: true, borderWidth: 2},
      ]},
      options: {animation: false, parsing: true, normalized: true, responsive: false,
        scales: {x: {title: {display: true, text: 'trial'}}, y: {title: {display: true, text: label}}}},
    });
  }

  // Learning curves: one dataset per metric, Chart.js lines.
  function curves(canvas, series, old) {
    if (old) old.destroy();
    let n = 0;
    for (const s of series) n += s.points.length;
    canvas.dataset.points = String(n);
    if (!window.Chart) {
      scatter(canvas, series.map((s, i) => ({points: s.points, line: true, color: COLORS[i % 6]})), {width: 640, height: 300, xlabel: 'step'});
      return null;
    }
    return new Chart(canvas, {
      type: 'line',
      data: {datasets: series.map((s, i) => ({label: s.label, data: s.points.map((p) => ({x: p[0], y: p[1]})),
        borderColor: COLORS[i % 6], backgroundColor: COLORS[i % 6], pointRadius: s.points.length === 1 ? 4 : 0,
        borderWidth: 1.5, yAxisID: i ? 'y' + i : 'y'}))},
      options: {animation: false, normalized: true, responsive: false, parsing: true,
        scales: Object.assign({x: {type: 'linear', title: {display: true, text: 'step'}}},
          ...series.slice(1).map((s, i) => ({['y' + (i + 1)]: {position: 'right', grid: {drawOnChartArea: false}}})))},
    });
  }

  // Every trial's curve of one metric, a Chart.js dataset each (label
  // "trial N"): series [{id, points, best, stopped}]. The best trial is
  // drawn last, thick and red; a stopped one dashed, with a cross at its
  // last point; a one-point curve as a dot. Without Chart.js, canvas lines.
  function trialCurves(canvas, series, metric, old) {
    if (old) old.destroy();
    const ordered = series.filter((s) => !s.best).concat(series.filter((s) => s.best));
    canvas.dataset.lines = String(ordered.length);
    if (!window.Chart) {
      scatter(canvas, ordered.map((s) => ({points: s.points, line: s.points.length > 1, color: s.best ? COLORS[1] : '#89a'})),
        {width: 640, height: 300, xlabel: 'step'});
      return null;
    }
    const last = (s) => (ctx) => (ctx.dataIndex === s.points.length - 1 && s.stopped ? 7 : s.points.length === 1 ? 4 : 0);
    return new Chart(canvas, {
      type: 'line',
      data: {datasets: ordered.map((s) => ({
        label: 'trial ' + s.id, data: s.points.map((p) => ({x: p[0], y: p[1]})),
        borderColor: s.best ? COLORS[1] : s.stopped ? '#e08a2c' : 'rgba(31,119,180,0.45)',
        backgroundColor: s.best ? COLORS[1] : s.stopped ? '#e08a2c' : COLORS[0],
        borderWidth: s.best ? 3 : 1.2, borderDash: s.stopped ? [5, 4] : [],
        pointStyle: s.stopped ? 'crossRot' : 'circle', pointRadius: last(s), pointBorderWidth: 2,
        cairnBest: !!s.best, cairnStopped: !!s.stopped}))},
      options: {animation: false, normalized: true, responsive: false, parsing: true,
        plugins: {legend: {display: false}, tooltip: {callbacks: {title: (items) => items.map((i) => i.dataset.label)}}},
        scales: {x: {type: 'linear', title: {display: true, text: 'step'}}, y: {title: {display: true, text: metric}}}},
    });
  }

  // A horizontal bar per label (parameter importance), largest first as
  // given; values in [0, 1].
  function bars(canvas, labels, values, old) {
    if (old) old.destroy();
    canvas.dataset.bars = String(labels.length);
    if (!window.Chart) {
      scatter(canvas, [{points: values.map((v, i) => [labels[i], v])}], {width: 420, height: 300, categories: labels});
      return null;
    }
    return new Chart(canvas, {
      type: 'bar',
      data: {labels, datasets: [{label: 'importance', data: values, backgroundColor: COLORS[2]}]},
      options: {indexAxis: 'y', animation: false, responsive: false, plugins: {legend: {display: false}},
        scales: {x: {min: 0, max: 1, title: {display: true, text: 'share of variance'}}}},
    });
  }

  return {scatter, parallel, history, curves, trialCurves, bars, fmt, COLORS};
})();
