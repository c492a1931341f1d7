// Cairn web UI: a single-page app over cairnd's REST API (/v1/). This file
// holds the router, the token, REST calls, login, the studies list and the
// helpers the pages share; study.js, trial.js and jobs.js draw the other
// pages. Routes on location.pathname: /login, / (studies), /studies/{s},
// /studies/{s}/trials/{t}, /jobs, /jobs/{j}. The token lives in
// sessionStorage; every call sends it as a bearer token.
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
    if (r.status === 401) { go(loginPath({expired: '1'})); }
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
  if (a && a.origin === location.origin && !a.target && !a.download && !e.ctrlKey && !e.metaKey) {
    e.preventDefault(); go(a.pathname + a.search);
  }
});
window.addEventListener('popstate', route);

function showError(err) {
  $main.insertAdjacentHTML('afterbegin', `<p class="error">${esc(err.message || err)}</p>`);
}

function setNav(html) { document.getElementById('nav').innerHTML = html; }

// ---- deep links through login ---------------------------------------------
// Where login returns to: a path of this site only (one leading '/', no
// scheme, no '//' or '/\' that a browser reads as another host), never
// /login itself; anything else is '/'.
function safeNext(next) {
  if (!next || next.length > 2000 || !/^\/(?![/\\])/.test(next)) return '/';
  if (/[\u0000-\u001f\\]/.test(next) || /^\/login(?:[/?#]|$)/.test(next)) return '/';
  return next;
}

// /login carrying the page to come back to (the current one by default).
function loginPath(extra) {
  const params = new URLSearchParams(extra || {});
  const here = location.pathname === '/login' ? '/' : location.pathname + location.search;
  if (here !== '/') params.set('next', here);
  const q = params.toString();
  return '/login' + (q ? '?' + q : '');
}

function route() {
  if (pollTimer) { clearTimeout(pollTimer); pollTimer = null; }
  const path = location.pathname;
  const params = new URLSearchParams(location.search);
  if (path === '/login') return loginPage(params);
  if (!token()) {
    history.replaceState(null, '', loginPath());
    return route();
  }
  let m;
  if ((m = path.match(/^\/studies\/([^/]+)\/trials\/([^/]+)$/))) return trialPage(m[1], m[2]).catch(showError);
  if ((m = path.match(/^\/studies\/([^/]+)$/))) return studyPage(m[1]).catch(showError);
  if ((m = path.match(/^\/jobs\/([^/]+)$/))) return jobPage(decodeURIComponent(m[1])).catch(showError);
  if (path === '/jobs') return jobsPage().catch(showError);
  return studiesPage().catch(showError);
}

// ---- login -------------------------------------------------------------
function loginPage(params) {
  const next = safeNext(params.get('next'));
  const given = params.get('token');
  if (given) {
    sessionStorage.setItem(TOKEN_KEY, given);
    history.replaceState(null, '', next);  // The token leaves the address bar.
    return route();
  }
  sessionStorage.removeItem(TOKEN_KEY);
  setNav('');
  $main.innerHTML = `<form class="login" id="login"><h1>Log in</h1>
    ${params.get('expired') ? '<p class="error">The token was refused: log in again.</p>' : ''}
    ${next !== '/' ? `<p class="muted">then on to <code id="next">${esc(next)}</code></p>` : ''}
    <label>Token (cairn token create, or the admin token in &lt;data-dir&gt;/admin.token)
    <input type="password" id="token" autocomplete="off" autofocus></label>
    <button type="submit">Log in</button></form>`;
  document.getElementById('login').addEventListener('submit', (e) => {
    e.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value.trim());
    go(next);
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
  const t = bestTrial(trials, metric);
  return t ? finalMetric(t, metric.metricId) : undefined;
}

function bestTrial(trials, metric) {
  let best, bestV;
  for (const t of trials) {
    const v = finalMetric(t, metric.metricId);
    if (t.state === 'SUCCEEDED' && v !== undefined && (bestV === undefined || isBetter(v, bestV, metric.goal))) {
      best = t; bestV = v;
    }
  }
  return best;
}

// Why the early-stopping rule stopped `t` (trial metadata
// early_stopping_reason), '' if it did not; a trial stopped on request
// (StopTrial) has no reason and says so.
function earlyStopReason(t) {
  const reason = (t.metadata || {}).early_stopping_reason;
  if (reason) return reason;
  return t.stoppedEarly ? 'stopped on request (trial stop)' : '';
}

// The state to show: a trial the rule stopped reads STOPPED EARLY, not the
// SUCCEEDED (and its job's CANCELLED, exit 143) it ended with.
function displayState(t) {
  if (t.state === 'SUCCEEDED' && t.stoppedEarly) return 'STOPPED EARLY';
  if (t.state === 'CANCELLED' && (t.metadata || {}).early_stopping_reason) return 'STOPPED EARLY';
  return t.state;
}

// A trial's job state; a job the early-stopping rule ended (CANCELLED,
// exit code 143: the SIGTERM that stopped it) says so.
function jobStateText(t) {
  const job = t.job || {};
  if (!job.state) return '';
  return job.state + (displayState(t) === 'STOPPED EARLY' ? ' (stopped early)' : '');
}

function stateClass(state) { return 'state-' + state.replace(/ /g, '_'); }

function stamp(ts) { return ts ? ts.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : ''; }

// Fills `pre` with the last 200 lines of a log read in chunks from
// `pathAt(offset)` (a ReadTrialLogs or ReadJobLogs answer: data in base64,
// nextOffset, complete).
async function tailLog(pre, pathAt) {
  let offset = 0, text = '';
  try {
    for (let i = 0; i < 64; i++) {
      const r = await api(pathAt(offset));
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

// ---- studies list ----------------------------------------------------------
async function studiesPage() {
  setNav('');
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

document.addEventListener('DOMContentLoaded', route);
