// Cairn web UI: the trial page (state, early stopping, parameters, final
// measurement, job, learning curves of every metric, log tail).
'use strict';

async function trialPage(sid, tid) {
  const name = `studies/${sid}/trials/${tid}`;
  setNav(`<a href="/">studies</a> / <a href="/studies/${esc(sid)}">studies/${esc(sid)}</a> / trials/${esc(tid)}`);
  const [study, trial] = await Promise.all([api('studies/' + sid), api(name)]);
  const params = trial.parameters.map((p) => `<tr><td>${esc(p.parameterId)}</td><td class="num">${esc(paramValue(p.value))}</td></tr>`).join('');
  const finals = ((trial.finalMeasurement || {}).metrics || []).map((m) =>
    `<tr><td>${esc(m.metricId)}</td><td class="num">${esc(CairnCharts.fmt(m.value))}</td></tr>`).join('');
  const state = displayState(trial), reason = earlyStopReason(trial);
  $main.innerHTML = `<h1>${esc(name)} <span id="trial-state" class="${stateClass(state)}">${esc(state)}</span></h1>
    ${reason ? `<p id="early-stop" class="early-stop">Stopped early: ${esc(reason)}</p>` : ''}
    <button id="stop">Stop trial</button> <span id="action" class="error"></span>
    <div class="grid">
      <div class="panel"><h3>Parameters</h3><table id="params"><tbody>${params}</tbody></table></div>
      <div class="panel"><h3>Final measurement</h3><table><tbody>${finals || '<tr><td class="muted">none yet</td></tr>'}</tbody></table></div>
      ${jobPanel(trial)}
    </div>
    <h2>Learning curves</h2><div class="panel"><canvas id="curves" width="720" height="320"></canvas>
      <p class="muted" id="curve-note"></p></div>
    <h2>Log (tail)</h2><pre class="log" id="log">${(trial.job || {}).logPath ? 'loading...' : 'no job log'}</pre>`;
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
  if ((trial.job || {}).logPath) tailLog(document.getElementById('log'), (offset) => `${name}/logs?offset=${offset}`);
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

// The job panel (jobStateText marks a job stopped early, and so its exit
// code).
function jobPanel(trial) {
  const job = trial.job || {};
  const why = job.state && displayState(trial) === 'STOPPED EARLY' ? ' (stopped early)' : '';
  return `<div class="panel"><h3>Job</h3><dl class="kv" id="job">
    <dt>state</dt><dd>${esc(jobStateText(trial) || 'no job')}</dd><dt>attempts</dt><dd>${esc(job.attempts || 0)}</dd>
    <dt>restarts</dt><dd>${esc(job.restarts || 0)}</dd><dt>exit code</dt><dd>${esc((job.lastExitCode || 0) + why)}</dd>
    <dt>GPUs</dt><dd>${esc((job.gpus || []).join(',') || '-')}</dd><dt>job dir</dt><dd>${esc(job.jobDir || '-')}</dd>
    <dt>started</dt><dd>${esc(stamp(trial.startTime))}</dd><dt>ended</dt><dd>${esc(stamp(trial.endTime))}</dd>
    ${trial.infeasibleReason ? `<dt>infeasible</dt><dd>${esc(trial.infeasibleReason)}</dd>` : ''}</dl></div>`;
}
