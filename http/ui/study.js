// Cairn web UI: the study page. Optimization history, every trial's
// learning curve on one chart, parameter importance, parallel coordinates,
// slices, the Pareto front and the trials table; polls every 2 s.
'use strict';

// Past this many trials the page fetches no intermediate measurements (the
// list alone stays fast at 10,000 trials) and draws no learning curves.
const CURVES_MAX_TRIALS = 1000;

const studyView = {sortKey: 'id', sortDir: 1, charts: {}};

async function studyPage(id) {
  setNav(`<a href="/">studies</a> / studies/${esc(id)}`);
  $main.innerHTML = `<h1 id="title">studies/${esc(id)}</h1><p id="summary" class="muted"></p>
    <div class="grid">
      <div class="panel"><h3>Optimization history</h3><canvas id="history" width="640" height="300"></canvas></div>
      <div class="panel" id="pareto-panel" hidden><h3>Pareto front</h3><canvas id="pareto"></canvas></div>
    </div>
    <div class="grid">
      <div class="panel"><h3>Learning curves of every trial</h3><canvas id="all-curves" width="640" height="300"></canvas>
        <p class="muted" id="all-curves-note"></p></div>
      <div class="panel"><h3>Parameter importance</h3><canvas id="importance" width="420" height="300"></canvas>
        <p class="muted" id="importance-note"></p></div>
    </div>
    <h2>Parallel coordinates</h2><div class="panel"><canvas id="parallel"></canvas></div>
    <h2>Slices (objective against each parameter)</h2><div class="grid" id="slices"></div>
    <h2>Trials <a href="#" id="csv">CSV</a></h2><div class="tablewrap"><table id="trials"><thead></thead><tbody></tbody></table></div>`;
  document.getElementById('csv').addEventListener('click', async (e) => {
    e.preventDefault();
    const r = await fetch(`/v1/studies/${id}/trials?format=csv`, {headers: {'Authorization': 'Bearer ' + token()}});
    const url = URL.createObjectURL(await r.blob());
    const a = document.createElement('a'); a.href = url; a.download = `study-${id}-trials.csv`; a.click();
  });
  let signature = '';
  let study = null, trials = [];
  const refresh = async () => {
    const s = await api('studies/' + id);
    const sig = [s.state, s.trialCount, s.pendingCount, s.succeededCount, s.failedCount, s.infeasibleCount, s.cancelledCount].join();
    if (sig !== signature) {
      performance.mark('cairn-fetch-start');
      const withCurves = s.trialCount <= CURVES_MAX_TRIALS;
      trials = await listAll(`studies/${id}/trials` + (withCurves ? '?include_measurements=true' : ''), 'trials',
        withCurves ? 1000 : 10000);
      performance.mark('cairn-fetched');
      const succeededChanged = !study || study.succeededCount !== s.succeededCount;
      study = s; signature = sig;
      renderStudy(id, study, trials);
      if (succeededChanged) renderImportance(id, study);
      performance.mark('cairn-drawn');
      // After the frame that shows it (layout and paint done).
      requestAnimationFrame(() => setTimeout(() => performance.mark('cairn-painted')));
    }
  };
  await refresh();
  const poll = async () => {
    if (location.pathname !== '/studies/' + id) return;
    try { await refresh(); } catch (e) { /* shown on the next navigation */ }
    pollTimer = setTimeout(poll, POLL_MS);
  };
  pollTimer = setTimeout(poll, POLL_MS);
}

function renderStudy(id, study, trials) {
  const metrics = study.spec.metrics;
  const objective = metrics[0] || {metricId: '', goal: 'MINIMIZE'};
  document.getElementById('title').textContent = `${study.name}  ${study.displayName}`;
  const best = bestValue(trials, objective);
  document.getElementById('summary').textContent =
    `${study.state}: ${study.trialCount} trials (${study.succeededCount} succeeded, ${study.pendingCount} pending, ` +
    `${study.failedCount} failed, ${study.infeasibleCount} infeasible, ${study.cancelledCount} cancelled); ` +
    `best ${objective.metricId} ${best === undefined ? '-' : CairnCharts.fmt(best)}; created ${stamp(study.createTime)}`;
  const done = trials.filter((t) => t.state === 'SUCCEEDED' && finalMetric(t, objective.metricId) !== undefined);
  // History: objective per trial and best so far.
  const points = [], bestLine = [];
  let b;
  for (const t of done) {
    const v = finalMetric(t, objective.metricId);
    points.push([+t.id, v]);
    if (b === undefined || isBetter(v, b, objective.goal)) b = v;
    bestLine.push([+t.id, b]);
  }
  studyView.charts.history = CairnCharts.history(document.getElementById('history'), points, bestLine,
    objective.metricId, studyView.charts.history);
  renderAllCurves(study, trials, objective);
  renderParallel(study, done, objective);
  renderSlices(study, done, objective);
  if (metrics.length >= 2) {
    const panel = document.getElementById('pareto-panel');
    panel.hidden = false;
    renderPareto(done, metrics);
  }
  renderTable(id, study, trials);
}

function paramSpecs(study) {
  const out = [];
  const walk = (specs) => {
    for (const p of specs || []) {
      out.push(p);
      for (const c of p.conditionalParameterSpecs || []) walk([c.parameterSpec]);
    }
  };
  walk(study.spec.parameters);
  return out;
}

function paramMap(t) {
  const m = {};
  for (const p of t.parameters) m[p.parameterId] = p.value;
  return m;
}

function renderParallel(study, done, objective) {
  const specs = paramSpecs(study);
  const maps = done.map(paramMap);
  const dims = specs.map((p) => {
    const categorical = p.type === 'CATEGORICAL';
    return {name: p.parameterId, values: maps.map((m) => m[p.parameterId] === undefined ? NaN : m[p.parameterId]),
      categories: categorical ? p.categoricalValues : null, log: p.scaleType === 'UNIT_LOG_SCALE'};
  });
  dims.push({name: objective.metricId, values: done.map((t) => finalMetric(t, objective.metricId))});
  const width = Math.max(480, 140 * dims.length);
  CairnCharts.parallel(document.getElementById('parallel'), dims, objective.goal !== 'MAXIMIZE', width, 300);
}

function renderSlices(study, done, objective) {
  const box = document.getElementById('slices');
  box.innerHTML = '';
  const maps = done.map(paramMap);
  for (const p of paramSpecs(study)) {
    const panel = document.createElement('div');
    panel.className = 'panel';
    panel.innerHTML = `<h3>${esc(p.parameterId)}</h3>`;
    const canvas = document.createElement('canvas');
    canvas.className = 'slice';
    panel.appendChild(canvas);
    box.appendChild(panel);
    const pts = [];
    done.forEach((t, i) => {
      const v = maps[i][p.parameterId];
      if (v !== undefined) pts.push([v, finalMetric(t, objective.metricId)]);
    });
    CairnCharts.scatter(canvas, [{points: pts}], {xlabel: p.parameterId,
      categories: p.type === 'CATEGORICAL' ? p.categoricalValues : null,
      logx: p.scaleType === 'UNIT_LOG_SCALE'});
  }
}

function renderPareto(done, metrics) {
  const [a, b] = metrics;
  const pts = done.map((t) => [finalMetric(t, a.metricId), finalMetric(t, b.metricId)])
    .filter((p) => p[0] !== undefined && p[1] !== undefined);
  // The front: points no other point dominates (sorted by the first metric).
  const sign = (m) => (m.goal === 'MAXIMIZE' ? -1 : 1);
  const sorted = pts.slice().sort((p, q) => sign(a) * (p[0] - q[0]) || sign(b) * (p[1] - q[1]));
  const front = [];
  let bestB = Infinity;
  for (const p of sorted) if (sign(b) * p[1] < bestB) { bestB = sign(b) * p[1]; front.push(p); }
  CairnCharts.scatter(document.getElementById('pareto'), [
    {points: pts, color: '#9ab'}, {points: front, color: '#d62728', line: true}],
  {width: 420, height: 300, xlabel: `${a.metricId} vs ${b.metricId}`});
  document.getElementById('pareto').dataset.front = String(front.length);
}

function renderTable(id, study, trials) {
  const specs = paramSpecs(study);
  const metrics = study.spec.metrics;
  const cols = [{key: 'id', label: 'trial', num: true, get: (t) => +t.id}, {key: 'state', label: 'state', get: displayState}]
    .concat(metrics.map((m) => ({key: 'm:' + m.metricId, label: m.metricId, num: true, get: (t) => finalMetric(t, m.metricId)})))
    .concat(specs.map((p) => ({key: 'p:' + p.parameterId, label: p.parameterId, num: p.type !== 'CATEGORICAL',
      get: (t) => t.pmap[p.parameterId]})))
    .concat([{key: 'reason', label: 'reason', get: (t) => earlyStopReason(t) || t.infeasibleReason || ''},
      {key: 'job', label: 'job', get: jobStateText},
      {key: 'start', label: 'started', get: (t) => stamp(t.startTime)}]);
  const table = document.getElementById('trials');
  table.style.setProperty('--cols', `repeat(${cols.length}, 7.5em)`);
  table.tHead.innerHTML = '<tr>' + cols.map((c) => `<th data-key="${esc(c.key)}" class="${
    c.key === studyView.sortKey ? (studyView.sortDir > 0 ? 'sorted-asc' : 'sorted-desc') : ''}">${esc(c.label)}</th>`).join('') + '</tr>';
  const col = cols.find((c) => c.key === studyView.sortKey) || cols[0];
  const cells = trials.map((t) => { t.pmap = t.pmap || paramMap(t); return cols.map((c) => c.get(t)); });
  const ci = cols.indexOf(col);
  const keyed = trials.map((t, i) => [cells[i][ci], t, cells[i]]);
  keyed.sort((x, y) => {
    const a = x[0], b = y[0];
    if (a === undefined || a === '') return 1;
    if (b === undefined || b === '') return -1;
    return (a < b ? -1 : a > b ? 1 : 0) * studyView.sortDir;
  });
  const html = [];
  const sid = esc(id);
  for (const [, t, row] of keyed) {
    html.push(`<tr><td class="num"><a href="/studies/${sid}/trials/${+t.id}">${+t.id}</a></td><td class="${stateClass(row[1])}">${esc(row[1])}</td>`);
    for (let i = 2; i < cols.length; i++) {
      const v = row[i];
      if (v === undefined || v === '') html.push('<td></td>');
      else if (typeof v === 'number') html.push(`<td class="num">${CairnCharts.fmt(v)}</td>`);
      else html.push(`<td>${esc(v)}</td>`);
    }
    html.push('</tr>');
  }
  table.tBodies[0].innerHTML = html.join('');
  table.tHead.onclick = (e) => {
    const th = e.target.closest('th');
    if (!th) return;
    studyView.sortDir = studyView.sortKey === th.dataset.key ? -studyView.sortDir : 1;
    studyView.sortKey = th.dataset.key;
    renderTable(id, study, trials);
  };
}


// Every trial's objective curve on one chart: the best trial highlighted,
// early-stopped ones dashed with a cross at their last point.
function renderAllCurves(study, trials, objective) {
  const note = document.getElementById('all-curves-note');
  if (study.trialCount > CURVES_MAX_TRIALS) {
    note.textContent = `not drawn past ${CURVES_MAX_TRIALS} trials`;
    return;
  }
  const best = bestTrial(trials, objective);
  const series = [];
  for (const t of trials) {
    const points = [];
    for (const m of t.measurements || []) {
      for (const x of m.metrics || []) if (x.metricId === objective.metricId) points.push([+(m.stepCount || 0), x.value]);
    }
    if (points.length) {
      series.push({id: +t.id, points, best: t === best, stopped: displayState(t) === 'STOPPED EARLY'});
    }
  }
  studyView.charts.allCurves = CairnCharts.trialCurves(document.getElementById('all-curves'), series,
    objective.metricId, studyView.charts.allCurves);
  const stopped = series.filter((s) => s.stopped).length;
  note.textContent = series.length ? `${series.length} trials with ${objective.metricId} curves` +
    (best ? `; best trial ${best.id} in bold` : '') + (stopped ? `; ${stopped} stopped early (dashed, ended with x)` : '') :
    'no intermediate measurements yet';
}

// fANOVA importance from cairnd (GET .../parameterImportance) as bars.
async function renderImportance(id, study) {
  const note = document.getElementById('importance-note');
  const canvas = document.getElementById('importance');
  // cairnd answers parameterImportance from this many succeeded trials on
  // (served in /static/limits.js); fewer are not asked.
  const minTrials = CAIRN_LIMITS.importanceMinTrials;
  if (study.succeededCount < minTrials) {
    note.textContent = `shown from ${minTrials} succeeded trials on`;
    return;
  }
  try {
    const r = await api(`studies/${id}/parameterImportance`);
    if (location.pathname !== '/studies/' + id) return;
    const bars = (r.parameters || []).slice().sort((a, b) => b.importance - a.importance);
    studyView.charts.importance = CairnCharts.bars(canvas, bars.map((p) => p.parameterId),
      bars.map((p) => p.importance), studyView.charts.importance);
    note.textContent = `share of ${r.metricId}'s variance each parameter explains alone ` +
      `(fANOVA on a random forest over ${r.trialCount} trials)`;
  } catch (e) {
    if (document.body.contains(note)) note.textContent = e.message;
  }
}
