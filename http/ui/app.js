// Cairn web UI: a single-page app over cairnd's REST API (/v1/). Routes on
// location.pathname: /login, / (studies), /studies/{s}, /studies/{s}/trials/{t}.
// The token lives in sessionStorage; every call sends it as a bearer token.
'use strict';

const TOKEN_KEY = 'cairn.token';
const POLL_MS = 2000;
const $main = document.getElementById('main');
let pollTimer = null;

function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
}

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path, init) {
  const opts = Object.assign({}, init || {});
  opts.headers = Object.assign({'Authorization': 'Bearer ' + token()}, opts.headers || {});
  const r = await fetch('/v1/' + path, opts);
  const body = await r.json().catch(() => ({}));
  if (!r.ok) {
    const msg = body.error ? body.error.status + ': ' + body.error.message : 'HTTP ' + r.status;
    if (r.status === 401) { go('/login?expired=1'); }
    throw new ApiError(r.status, msg);
  }
  return body;
}

// Every item of a paged list; `pageSize` within the API's input limits.
async function listAll(path, key, pageSize) {
  const out = [];
  let tokenParam = '';
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api(path + sep + 'page_size=' + (pageSize || 1000) + (tokenParam ? '&page_token=' + encodeURIComponent(tokenParam) : ''));
    for (const x of page[key] || []) out.push(x);
    tokenParam = page.nextPageToken || '';
  } while (tokenParam);
  return out;
}

function go(path) { history.pushState(null, '', path); route(); }

document.addEventListener('click', (e) => {
  const a = e.target.closest('a');
  if (a && a.origin === location.origin && !a.target && !e.ctrlKey && !e.metaKey) {
    e.preventDefault(); go(a.pathname + a.search);
  }
});
window.addEventListener('popstate', route);

function showError(err) {
  $main.insertAdjacentHTML('afterbegin', `<p class="error">${esc(err.message || err)}</p>`);
}

function route() {
  if (pollTimer) { clearTimeout(pollTimer); pollTimer = null; }
  const path = location.pathname;
  const params = new URLSearchParams(location.search);
  if (path === '/login') return loginPage(params);
  if (!token()) return go('/login');
  let m;
  if ((m = path.match(/^\/studies\/([^/]+)\/trials\/([^/]+)$/))) return trialPage(m[1], m[2]).catch(showError);
  if ((m = path.match(/^\/studies\/([^/]+)$/))) return studyPage(m[1]).catch(showError);
  return studiesPage().catch(showError);
}

// ---- login -------------------------------------------------------------
function loginPage(params) {
  const given = params.get('token');
  if (given) {
    sessionStorage.setItem(TOKEN_KEY, given);
    history.replaceState(null, '', '/');  // The token leaves the address bar.
    return route();
  }
  sessionStorage.removeItem(TOKEN_KEY);
  document.getElementById('nav').textContent = '';
  $main.innerHTML = `<form class="login" id="login"><h1>Log in</h1>
    ${params.get('expired') ? '<p class="error">The token was refused: log in again.</p>' : ''}
    <label>Token (cairn token create, or the admin token in &lt;data-dir&gt;/admin.token)
    <input type="password" id="token" autocomplete="off" autofocus></label>
    <button type="submit">Log in</button></form>`;
  document.getElementById('login').addEventListener('submit', (e) => {
    e.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value.trim());
    go('/');
  });
}

// ---- helpers over trials ---------------------------------------------------
function paramValue(v) { return v === undefined || v === null ? '' : v; }

function finalMetric(t, id) {
  const fm = t.finalMeasurement;
  if (!fm || !fm.metrics) return undefined;
  for (const m of fm.metrics) if (m.metricId === id) return m.value;
  return undefined;
}

function isBetter(a, b, goal) { return goal === 'MAXIMIZE' ? a > b : a < b; }

function bestValue(trials, metric) {
  let best;
  for (const t of trials) {
    const v = finalMetric(t, metric.metricId);
    if (t.state === 'SUCCEEDED' && v !== undefined && (best === undefined || isBetter(v, best, metric.goal))) best = v;
  }
  return best;
}

function stamp(ts) { return ts ? ts.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : ''; }

// ---- studies list ----------------------------------------------------------
async function studiesPage() {
  document.getElementById('nav').textContent = '';
  const studies = await listAll('studies', 'studies');
  const rows = studies.map((s) => {
    const id = s.name.split('/')[1];
    const max = s.spec.maxTrials;
    const progress = max ? `${s.succeededCount} / ${max}` : `${s.succeededCount} done`;
    return `<tr><td><a href="/studies/${esc(id)}">${esc(s.name)}</a></td><td>${esc(s.displayName)}</td>
      <td class="state-${esc(s.state)}">${esc(s.state)}</td><td>${esc(progress)}, ${s.pendingCount} pending, ${s.failedCount} failed</td>
      <td class="num" id="best-${esc(id)}"></td><td>${esc(stamp(s.createTime))}</td></tr>`;
  }).join('');
  $main.innerHTML = `<h1>Studies</h1><table id="studies"><thead><tr><th>name</th><th>display name</th><th>state</th>
    <th>progress</th><th>best value</th><th>created</th></tr></thead><tbody>${rows}</tbody></table>
    ${studies.length ? '' : '<p class="muted">No studies yet.</p>'}`;
  for (const s of studies) {
    const metric = s.spec.metrics[0];
    if (!metric) continue;
    api(s.name + '/optimalTrials').then((r) => {
      const v = bestValue(r.optimalTrials || [], metric);
      const cell = document.getElementById('best-' + s.name.split('/')[1]);
      if (cell && v !== undefined) cell.textContent = `${metric.metricId} ${CairnCharts.fmt(v)}`;
    }).catch(() => {});
  }
}

// ---- study page --------------------------------------------------------------
const studyView = {sortKey: 'id', sortDir: 1, charts: {}};

async function studyPage(id) {
  document.getElementById('nav').innerHTML = `<a href="/">studies</a> / studies/${esc(id)}`;
  $main.innerHTML = `<h1 id="title">studies/${esc(id)}</h1><p id="summary" class="muted"></p>
    <div class="grid">
      <div class="panel"><h3>Optimization history</h3><canvas id="history" width="640" height="300"></canvas></div>
      <div class="panel" id="pareto-panel" hidden><h3>Pareto front</h3><canvas id="pareto"></canvas></div>
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
      trials = await listAll(`studies/${id}/trials`, 'trials', 10000);
      performance.mark('cairn-fetched');
      study = s; signature = sig;
      renderStudy(id, study, trials);
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
      categories: categorical ? p.categoricalValues : null};
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
  const cols = [{key: 'id', label: 'trial', num: true, get: (t) => +t.id}, {key: 'state', label: 'state', get: (t) => t.state}]
    .concat(metrics.map((m) => ({key: 'm:' + m.metricId, label: m.metricId, num: true, get: (t) => finalMetric(t, m.metricId)})))
    .concat(specs.map((p) => ({key: 'p:' + p.parameterId, label: p.parameterId, num: p.type !== 'CATEGORICAL',
      get: (t) => t.pmap[p.parameterId]})))
    .concat([{key: 'job', label: 'job', get: (t) => (t.job ? t.job.state : '')},
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
    html.push(`<tr><td class="num"><a href="/studies/${sid}/trials/${+t.id}">${+t.id}</a></td><td class="state-${esc(t.state)}">${esc(t.state)}</td>`);
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

// ---- trial page ----------------------------------------------------------------
async function trialPage(sid, tid) {
  const name = `studies/${sid}/trials/${tid}`;
  document.getElementById('nav').innerHTML =
    `<a href="/">studies</a> / <a href="/studies/${esc(sid)}">studies/${esc(sid)}</a> / trials/${esc(tid)}`;
  const [study, trial] = await Promise.all([api('studies/' + sid), api(name)]);
  const job = trial.job || {};
  const params = trial.parameters.map((p) => `<tr><td>${esc(p.parameterId)}</td><td class="num">${esc(paramValue(p.value))}</td></tr>`).join('');
  const finals = ((trial.finalMeasurement || {}).metrics || []).map((m) =>
    `<tr><td>${esc(m.metricId)}</td><td class="num">${esc(CairnCharts.fmt(m.value))}</td></tr>`).join('');
  $main.innerHTML = `<h1>${esc(name)} <span class="state-${esc(trial.state)}">${esc(trial.state)}</span></h1>
    <button id="stop">Stop trial</button> <span id="action" class="error"></span>
    <div class="grid">
      <div class="panel"><h3>Parameters</h3><table id="params"><tbody>${params}</tbody></table></div>
      <div class="panel"><h3>Final measurement</h3><table><tbody>${finals || '<tr><td class="muted">none yet</td></tr>'}</tbody></table></div>
      <div class="panel"><h3>Job</h3><dl class="kv" id="job">
        <dt>state</dt><dd>${esc(job.state || 'no job')}</dd><dt>attempts</dt><dd>${esc(job.attempts || 0)}</dd>
        <dt>restarts</dt><dd>${esc(job.restarts || 0)}</dd><dt>exit code</dt><dd>${esc(job.lastExitCode || 0)}</dd>
        <dt>GPUs</dt><dd>${esc((job.gpus || []).join(',') || '-')}</dd><dt>job dir</dt><dd>${esc(job.jobDir || '-')}</dd>
        <dt>started</dt><dd>${esc(stamp(trial.startTime))}</dd><dt>ended</dt><dd>${esc(stamp(trial.endTime))}</dd>
        ${trial.infeasibleReason ? `<dt>infeasible</dt><dd>${esc(trial.infeasibleReason)}</dd>` : ''}</dl></div>
    </div>
    <h2>Learning curves</h2><div class="panel"><canvas id="curves" width="720" height="320"></canvas>
      <p class="muted" id="curve-note"></p></div>
    <h2>Log (tail)</h2><pre class="log" id="log">${job.logPath ? 'loading...' : 'no job log'}</pre>`;
  document.getElementById('stop').addEventListener('click', async () => {
    try { await api(name + ':stop', {method: 'POST', body: '{}'}); route(); }
    catch (e) { document.getElementById('action').textContent = e.message; }
  });
  const ids = new Set(study.spec.metrics.map((m) => m.metricId));
  for (const m of trial.measurements || []) for (const x of m.metrics || []) ids.add(x.metricId);
  const series = [];
  let truncated = false;
  for (const metricId of ids) {
    const points = await curvePoints(name, metricId);
    truncated = truncated || points.downsampled;
    if (points.length) series.push({label: metricId, points});
  }
  CairnCharts.curves(document.getElementById('curves'), series, null);
  document.getElementById('curve-note').textContent = series.length === 0 ? 'no intermediate measurements' :
    (truncated ? 'long curves shown downsampled by cairnd (min and max of each run kept)' : '');
  if (job.logPath) loadLogTail(name);
}

// A curve's points: page through GetMetricHistory; past 50,000 points ask
// cairnd for a downsampled curve instead.
async function curvePoints(name, metricId) {
  const base = `${name}/metricHistory?metric_id=${encodeURIComponent(metricId)}`;
  const out = [];
  let pageToken = '';
  do {
    const page = await api(base + '&page_size=10000' + (pageToken ? '&page_token=' + encodeURIComponent(pageToken) : ''));
    for (const p of page.points || []) out.push([+p.stepCount, p.value]);
    pageToken = page.nextPageToken || '';
    if (pageToken && out.length >= 50000) {
      const all = await api(base + '&max_points=4000');
      const ds = (all.points || []).map((p) => [+p.stepCount, p.value]);
      ds.downsampled = true;
      return ds;
    }
  } while (pageToken);
  return out;
}

async function loadLogTail(name) {
  const pre = document.getElementById('log');
  let offset = 0, text = '';
  try {
    for (let i = 0; i < 64; i++) {
      const r = await api(`${name}/logs?offset=${offset}`);
      const chunk = r.data ? atob(r.data) : '';
      text = (text + chunk).slice(-65536);
      if (!chunk || +r.nextOffset === offset) break;
      offset = +r.nextOffset;
      if (r.complete) break;
    }
    const lines = text.split('\n');
    pre.textContent = lines.slice(-200).join('\n') || '(empty)';
  } catch (e) {
    pre.textContent = e.message;
  }
}

route();
