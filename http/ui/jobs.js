// Cairn web UI: AI Platform training jobs (`cairn jobs submit training`,
// or POST /v1/projects/{p}/jobs): the list with each job's state, and a
// job's page with its trials and their logs. Reads go through AI
// Platform's REST surface, which sees every job whatever the project.
'use strict';

const JOBS_API = 'projects/-/jobs';
const FINAL_JOB_STATES = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

async function listJobs() {
  const out = [];
  let pageToken = '';
  do {
    const page = await api(JOBS_API + '?pageSize=100' + (pageToken ? '&pageToken=' + encodeURIComponent(pageToken) : ''));
    for (const j of page.jobs || []) out.push(j);
    pageToken = page.nextPageToken || '';
  } while (pageToken);
  return out;
}

function jobTrialCount(job) {
  const out = job.trainingOutput || {};
  const n = (out.trials || []).length;
  return `${out.completedTrialCount || 0} succeeded` + (n ? ` of ${n}` : '');
}

async function jobsPage() {
  setNav('');
  const jobs = await listJobs();
  const rows = jobs.map((j) => `<tr><td><a href="/jobs/${encodeURIComponent(j.jobId)}">${esc(j.jobId)}</a></td>
    <td class="state-${esc(j.state)}">${esc(j.state)}</td><td>${esc(jobTrialCount(j))}</td>
    <td>${esc((j.trainingInput || {}).pythonModule || '')}</td><td>${esc(stamp(j.createTime))}</td>
    <td>${esc(stamp(j.endTime))}</td><td class="error">${esc(j.errorMessage || '')}</td></tr>`).join('');
  $main.innerHTML = `<h1>Training jobs</h1><table id="jobs"><thead><tr><th>job</th><th>state</th><th>trials</th>
    <th>module</th><th>created</th><th>ended</th><th>error</th></tr></thead><tbody>${rows}</tbody></table>
    ${jobs.length ? '' : '<p class="muted">No jobs yet (cairn jobs submit training).</p>'}`;
  if (jobs.some((j) => !FINAL_JOB_STATES.includes(j.state))) {
    pollTimer = setTimeout(() => { if (location.pathname === '/jobs') route(); }, POLL_MS);
  }
}

function jobTrialRows(job) {
  const out = job.trainingOutput || {};
  return (out.trials || []).map((t) => {
    const state = t.isTrialStoppedEarly ? 'STOPPED EARLY' : (t.state || '');
    const metric = t.finalMetric || {};
    const hp = Object.entries(t.hyperparameters || {}).map(([k, v]) => `${k}=${v}`).join(' ');
    return `<tr><td class="num">${esc(t.trialId)}</td><td class="${stateClass(state)}">${esc(state)}</td>
      <td class="num">${metric.objectiveValue === undefined ? '' : esc(CairnCharts.fmt(metric.objectiveValue))}</td>
      <td class="num">${esc(metric.trainingStep || '')}</td><td>${esc(hp)}</td></tr>`;
  }).join('');
}

async function jobPage(id) {
  const path = JOBS_API + '/' + encodeURIComponent(id);
  setNav(`<a href="/jobs">jobs</a> / ${esc(id)}`);
  const job = await api(path);
  const input = job.trainingInput || {};
  $main.innerHTML = `<h1>job ${esc(id)} <span id="job-state" class="state-${esc(job.state)}">${esc(job.state)}</span></h1>
    ${job.errorMessage ? `<p class="error">${esc(job.errorMessage)}</p>` : ''}
    <dl class="kv" id="job-info"><dt>created</dt><dd>${esc(stamp(job.createTime))}</dd>
      <dt>started</dt><dd>${esc(stamp(job.startTime))}</dd><dt>ended</dt><dd>${esc(stamp(job.endTime))}</dd>
      <dt>module</dt><dd>${esc(input.pythonModule || '')} ${esc((input.args || []).join(' '))}</dd>
      <dt>scale tier</dt><dd>${esc(input.scaleTier || '')}</dd>
      <dt>labels</dt><dd>${esc(Object.entries(job.labels || {}).map(([k, v]) => k + '=' + v).join(', '))}</dd></dl>
    <h2>Trials</h2><table id="job-trials"><thead><tr><th>trial</th><th>state</th><th>objective</th><th>step</th>
      <th>hyperparameters</th></tr></thead><tbody>${jobTrialRows(job)}</tbody></table>
    <h2>Log <select id="log-trial"></select></h2><pre class="log" id="job-log">loading...</pre>`;
  const logs = await api(path + '/logs?trialId=0');
  const select = document.getElementById('log-trial');
  const trialIds = logs.trialIds || [];
  select.innerHTML = trialIds.map((t) => `<option value="${esc(t)}">trial ${esc(t)}</option>`).join('');
  const body = document.getElementById('job-trials').tBodies[0];
  if (!body.rows.length) {  // A plain training job: its one run, no metric.
    body.innerHTML = trialIds.map((t) => `<tr><td class="num">${esc(t)}</td>
      <td class="state-${esc(job.state)}">${esc(job.state)}</td><td></td><td></td><td>(no hyperparameters)</td></tr>`).join('');
  }
  const show = () => {
    const pre = document.getElementById('job-log');
    if (!select.value) { pre.textContent = 'no trial has started'; return; }
    tailLog(pre, (offset) => `${path}/logs?trialId=${encodeURIComponent(select.value)}&offset=${offset}`);
  };
  select.addEventListener('change', show);
  show();
  if (!FINAL_JOB_STATES.includes(job.state)) {
    pollTimer = setTimeout(() => { if (location.pathname === '/jobs/' + encodeURIComponent(id)) route(); }, POLL_MS);
  }
}
