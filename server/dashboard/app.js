'use strict';
// The qkov-sweep dashboard: the page script of the three views (sweeps, a
// sweep, a trial), reading the JSON API (docs/dashboard.md) and following
// server-sent events, with the helpers every view uses; the paper's task
// figures are in figures.js and the trial page in trial.js. No framework;
// charts with Chart.js.

const COLORS = { FAFO: '#2563eb', FACO: '#16a34a', CAFO: '#d97706', CACO: '#dc2626', '-': '#6b7280' };
// The metric a sweep page opens on, first present wins (docs/metrics.md).
const PREFERRED_METRICS = ['distinct_attention', 'ac', 'test_rationale_mass', 'rationale_mass',
  'eval_answer_mass_rollout',
  'test_accuracy', 'alpha', 'final_loss', 'train_loss'];
const TABLE_PAGE = 50;
// The matched panel's metric, first present wins: the task's attention curve.
const MATCHED_METRICS = ['distinct_attention', 'val_rationale_mass', 'val_answer_mass_rollout', 'ac', 'val_accuracy', 'val_f1'];

// What the page shows, for tests and for the curious: window.qkov.
window.qkov = { ratioPoints: [], tableRows: [], events: 0, ready: false };

// The page has drawn its data: for tests (window.qkov.ready) and for
// bench/dashboard_paint.py (window.qkovReadyAt, ms since navigation).
function markReady() {
  if (!window.qkov.ready) window.qkovReadyAt = performance.now();
  window.qkov.ready = true;
}

function $(sel, root) { return (root || document).querySelector(sel); }
// Text from the server as the page shows it: control characters and the
// bidirectional-text controls (which reorder what follows) become visible
// escapes, as the CLI prints them (common/text.h, TerminalSafe); line
// breaks and tabs stay, since a page lays them out rather than obeys them.
function visible(s) {
  return String(s).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    if (c === '\r') return '\\r';
    const n = c.charCodeAt(0);
    return n < 0x80 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}
// Children without the absent ones (null, undefined): DOM methods would
// show those as the words "null" and "undefined".
function present(children) { return children.filter((c) => c !== null && c !== undefined); }
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = visible(v);
    else if (k === 'title') e.setAttribute(k, visible(v));
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of present(children)) e.append(typeof c === 'string' ? visible(c) : c);
  return e;
}
function replace(parent, ...children) { parent.replaceChildren(...present(children)); }
function num(v) { return v === undefined || v === null ? NaN : Number(v); }
function fmt(v) {
  const x = num(v);
  if (!Number.isFinite(x)) return Number.isNaN(x) ? '-' : String(x);
  if (x !== 0 && (Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5)) return x.toExponential(3);
  return String(Number(x.toPrecision(4)));
}
// Axis tick labels: short numbers, and on log axes only 1, 2 and 5 times a
// power of ten.
function tick(value) {
  const v = Number(value);
  if (this.type === 'logarithmic') {
    const lead = v / 10 ** Math.floor(Math.log10(v) + 1e-9);
    if (![1, 2, 5].some((d) => Math.abs(lead - d) < 1e-6)) return '';
  }
  return fmt(v);
}
function stateName(s) { return String(s || '').toLowerCase(); }
function showError(message) {
  const e = $('#error');
  e.textContent = visible(message);
  e.hidden = false;
}

async function api(path) {
  const r = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  if (r.status === 401) { location.href = '/login'; throw new Error('not logged in'); }
  // A reply the server kept from before this request: it computes it again
  // in this many ms (the sweep page asks once more then).
  const recompute = Number(r.headers.get('X-Qkov-Recompute-In-Ms'));
  if (recompute > 0) window.qkov.keptUntil = Math.max(window.qkov.keptUntil || 0, Date.now() + recompute);
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error ? body.error.message : `HTTP ${r.status}`);
  return body;
}

function counts(sweep) {
  const c = { done: 0, running: 0, queued: 0, failed: 0, diverged: 0, preempted: 0, cancelled: 0, stopped_early: 0 };
  for (const sc of sweep.counts || []) c[stateName(sc.state)] = num(sc.count);
  return c;
}

function progressBar(sweep) {
  const c = counts(sweep), total = Math.max(1, num(sweep.total_trials));
  const bar = el('div', { class: 'bar', title: `${c.done} done, ${c.running} running, ${c.queued + c.preempted} queued, ${c.failed + c.diverged} failed` });
  for (const [cls, n] of [['done', c.done], ['running', c.running], ['failed', c.failed + c.diverged]]) {
    const s = el('span', { class: cls });
    s.style.width = `${(100 * n / total).toFixed(2)}%`;
    bar.append(s);
  }
  return bar;
}

// Trials per minute over the last 10 minutes, and the time left at that rate.
function throughput(sweep) {
  const c = counts(sweep);
  const perMin = num(sweep.ended_last_10min) / 10;
  const left = c.queued + c.running + c.preempted;
  let eta = '-';
  if (left === 0) eta = 'finished';
  else if (perMin > 0) {
    const m = left / perMin;
    eta = m < 1 ? '<1 min' : m < 120 ? `${Math.round(m)} min` : `${(m / 60).toFixed(1)} h`;
  }
  return { perMin, eta };
}

function crumbs(...parts) {
  const nav = $('#crumbs');
  nav.replaceChildren();
  for (const [text, href] of parts) {
    nav.append(' / ', href ? el('a', { href, text }) : el('span', { text }));
  }
}

let liveSource = null;
function follow(url, event, onData) {
  if (liveSource) liveSource.close();
  liveSource = new EventSource(url);
  liveSource.addEventListener(event, (e) => {
    window.qkov.events++;
    $('#live').classList.add('on');
    onData(JSON.parse(e.data));
  });
  liveSource.onerror = () => $('#live').classList.remove('on');
}

// ---- sweeps ----

function renderSweeps(list) {
  const sweeps = list.sweeps || [];
  const main = $('#main');
  const rows = sweeps.map((s) => {
    const c = counts(s), t = throughput(s);
    const status = s.cancelled ? 'cancelled' : s.paused ? 'paused' : (c.queued + c.running + c.preempted) ? 'active' : 'finished';
    return el('tr', { 'data-sweep': s.name },
      el('td', {}, el('a', { href: `/sweeps/${encodeURIComponent(s.name)}`, text: s.name })),
      el('td', {}, progressBar(s)),
      el('td', { class: 'num', text: `${c.done}/${num(s.total_trials)}` }),
      el('td', { class: 'num', text: c.running }),
      el('td', { class: 'num', text: c.queued + c.preempted }),
      el('td', { class: 'num', text: c.failed + c.diverged }),
      el('td', { class: 'num', text: t.perMin ? t.perMin.toFixed(1) : '-' }),
      el('td', { text: t.eta }),
      el('td', { class: 'num', text: s.priority }),
      el('td', { text: status }),
      el('td', { text: s.owner || '-' }));
  });
  replace(main,
    leasingBanner(),
    el('h1', { text: `Sweeps (${sweeps.length})` }),
    sweeps.length === 0 ? el('p', { class: 'muted', text: 'No sweeps yet: qkov submit FILE.' }) :
      el('table', { id: 'sweeps' },
        el('thead', {}, el('tr', {}, ...['sweep', 'progress', 'done', 'running', 'queued', 'failed',
          'trials/min', 'ETA', 'priority', 'status', 'owner'].map((h) => el('th', { text: h })))),
        el('tbody', {}, ...rows)));
}

// The server-wide leasing switch (/api/v1/leasing; `qkov leasing`), read
// with the page: a banner while it is paused.
let leasing = {};
function leasingBanner() {
  if (!leasing.paused) return null;
  let text = 'Leasing is paused server-wide';
  if (leasing.since) text += ` since ${leasing.since.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}`;
  if (leasing.actor) text += ` by ${leasing.actor}`;
  if (leasing.reason) text += `: ${leasing.reason}`;
  return el('p', { id: 'leasing', class: 'banner', role: 'status',
    text: `${text}. No trial is leased; running trials finish (qkov leasing resume).` });
}

async function sweepsPage() {
  crumbs();
  leasing = await api('/api/v1/leasing');
  renderSweeps(await api('/api/v1/sweeps'));
  markReady();
  follow('/api/v1/events', 'sweeps', renderSweeps);
}

// ---- one sweep ----

const charts = {};
function chart(id, config) {
  if (charts[id]) charts[id].destroy();
  charts[id] = new Chart($(`#${id}`), config);
  return charts[id];
}

function ratioChart(name, metric, agg) {
  const byParam = {};
  const points = [];
  for (const g of agg.groups || []) {
    const [param, ratio] = g.keys;
    const m = g.metrics[metric];
    if (!m || num(m.n) === 0) continue;
    const p = { parameterization: param, lr_ratio: Number(ratio), mean: num(m.mean), ci95: num(m.ci95), n: num(m.n) };
    points.push(p);
    (byParam[param] = byParam[param] || []).push(p);
  }
  window.qkov.ratioPoints = points;
  const datasets = [];
  for (const [param, ps] of Object.entries(byParam)) {
    ps.sort((a, b) => a.lr_ratio - b.lr_ratio);
    const color = COLORS[param] || '#111827';
    const band = (sign) => ps.map((p) => ({ x: p.lr_ratio, y: Number.isFinite(p.ci95) ? p.mean + sign * p.ci95 : p.mean }));
    datasets.push({ label: `${param} ci95-`, data: band(-1), borderWidth: 0, pointRadius: 0, fill: false, borderColor: color });
    datasets.push({ label: `${param} ci95+`, data: band(1), borderWidth: 0, pointRadius: 0, fill: '-1', backgroundColor: `${color}33`, borderColor: color });
    datasets.push({ label: param, data: ps.map((p) => ({ x: p.lr_ratio, y: p.mean, n: p.n, ci: p.ci95 })), borderColor: color, backgroundColor: color, pointRadius: 3 });
  }
  chart('ratio', {
    type: 'line',
    data: { datasets },
    options: {
      animation: false, parsing: true, maintainAspectRatio: false,
      scales: { x: { type: 'logarithmic', title: { display: true, text: 'eta_QK / eta_OV' }, ticks: { callback: tick } },
                y: { title: { display: true, text: `${metric} (mean over seeds, 95% CI)` } } },
      plugins: {
        legend: { labels: { filter: (item) => !item.text.includes('ci95') } },
        tooltip: { filter: (item) => !item.dataset.label.includes('ci95'),
          callbacks: { label: (c) => `${c.dataset.label} ratio ${fmt(c.raw.x)}: ${fmt(c.raw.y)} ± ${fmt(c.raw.ci)} (n=${c.raw.n})` } },
      },
    },
  });
}

function curvesChart(metric, curves) {
  const datasets = (curves.curves || []).map((c) => {
    const param = c.config.parameterization === 'PARAMETERIZATION_UNSPECIFIED' ? '-' : c.config.parameterization;
    const s = c.series || { steps: [], values: [] };
    return {
      label: `${c.trial_id}${c.config.arm ? ` ${c.config.arm}` : ''} ${param} ratio ${fmt(c.config.lr_ratio)} seed ${c.config.seed}`,
      data: s.steps.map((st, i) => ({ x: num(st), y: num(s.values[i]) })),
      borderColor: `${COLORS[param] || '#111827'}99`, borderWidth: 1, pointRadius: 0,
    };
  });
  chart('curves', {
    type: 'line',
    data: { datasets },
    options: {
      animation: false, maintainAspectRatio: false,
      interaction: { mode: 'nearest', intersect: false },
      scales: { x: { type: 'linear', title: { display: true, text: 'step' } },
                y: { title: { display: true, text: metric } } },
      plugins: { legend: { display: false },
        tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${fmt(c.raw.y)} at step ${c.raw.x}` } } },
    },
  });
}

// An adaptive sweep's ratio searches (docs/adaptive.md): per combination of
// the other axes, its state, the bracket and the seed mean +- 95% CI at both
// ends, as `qkov search` prints them.
function searchTable(sweep) {
  const r = (sweep.spec || {}).search;
  if (!r) return null;
  const at = (o, x) => (o.probes || []).find((p) => num(p.lr_ratio) === num(x));
  const cell = (p) => (p ? `${fmt(num(p.mean))} ± ${fmt(num(p.ci95))}` : '-');
  const rows = (sweep.searches || []).map((o) => {
    const below = at(o, o.below);
    let above = at(o, o.above);
    if (above && !above.reached) above = undefined;  // never reached
    return el('tr', { 'data-search': o.state },
      el('td', { text: String(o.parameterization || '') }), el('td', { text: fmt(num(o.eta_ov)) }),
      el('td', { text: o.state }), el('td', { text: below ? fmt(num(o.below)) : '-' }),
      el('td', { text: above ? fmt(num(o.above)) : '-' }), el('td', { text: cell(below) }),
      el('td', { text: cell(above) }), el('td', { text: String((o.probes || []).length) }),
      el('td', { text: (o.non_monotone || []).map((x) => fmt(num(x))).join(' ') || '-' }));
  });
  return el('div', { class: 'panel', id: 'searches' },
    el('p', { text: `ratio search: smallest lr_ratio in [${fmt(num(r.lo))}, ${fmt(num(r.hi))}] with seed-mean ${r.metric} ${r.op} ${fmt(num(r.target))} (resolution ${fmt(num(r.resolution))})` }),
    el('table', {},
      el('tr', {}, ...['param', 'eta_ov', 'state', 'below', 'above', 'mean@below', 'mean@above', 'probes', 'non-monotone'].map((h) => el('th', { text: h }))),
      ...rows));
}

function axisLabel(row) {
  const p = row.config.parameterization;
  return p === 'PARAMETERIZATION_UNSPECIFIED' ? '-' : p;
}

// The task table (/api/v1/tasks, common/task_info.h), read once: what each
// task's sweep page shows. A kind the table does not name is shown as the
// synthetic task.
let taskTable = null;
async function taskOf(kind) {
  if (!taskTable) taskTable = (await api('/api/v1/tasks')).tasks || [];
  return taskTable.find((t) => t.kind === kind) || taskTable.find((t) => t.name === 'synthetic');
}

async function sweepPage(name) {
  crumbs(['sweeps', '/'], [name, null]);
  const sweep = await api(`/api/v1/sweeps/${encodeURIComponent(name)}`);
  const first = await api(`/api/v1/sweeps/${encodeURIComponent(name)}/results?limit=${TABLE_PAGE}`);
  const names = new Set();
  for (const r of first.rows || []) for (const k of Object.keys(r.values || {})) names.add(k);
  const metrics = [...names].sort();
  const state = {
    metric: PREFERRED_METRICS.find((m) => names.has(m)) || metrics[0] || 'train_loss',
    curveMetric: 'train_loss',
    sort: '', order: 'asc', offset: 0, where: [],
  };
  const task = await taskOf(((sweep.spec || {}).training || {}).task);
  const figures = task.views.figures;
  // Theory and fixed-attention sweeps have their own figures (Fig. 4, 3),
  // and no ratio axis to plot against.
  const showRatio = figures.includes('ratio');
  // The ODE reports series over time, not curves at training steps.
  const showCurves = task.curves.length > 0;
  const axisColumns = task.takes_alphas ? ['alpha'] : [];
  // A sweep with arms (docs/sweep-files.md, "Arms") shows each trial's.
  const armColumn = (((sweep.spec || {}).axes || {}).arms || []).length > 0;
  const main = $('#main');
  // Every task reports train_loss as a curve, though not as a result.
  const curveMetrics = metrics.includes('train_loss') ? metrics : ['train_loss', ...metrics];
  const metricSelect = (value, onchange, options = metrics) => {
    const s = el('select', { onchange });
    for (const m of options) s.append(el('option', { value: m, text: m }));
    s.value = value;
    return s;
  };
  // The matched panel's choices: the curves a finished trial reports,
  // loaded when the first trial has finished.
  const matchedMetric = el('select', { id: 'matched-metric' });
  // The window: a training loss is smoothed over up to 5 reports (a
  // quarter of what a trial reports), a validation curve not at all.
  const reports = {};
  const defaultWindow = (curve) => (curve === 'train_loss' ? Math.max(1, Math.min(5, Math.floor((reports[curve] || 0) / 4))) : 1);
  const matchedReference = el('select', { id: 'matched-reference',
    onchange: (e) => { matchedWindow.value = defaultWindow(e.target.value); } });
  const matchedLevels = el('input', { type: 'text', id: 'matched-levels', size: 18, placeholder: 'levels: auto' });
  const matchedWindow = el('input', { type: 'number', id: 'matched-window', class: 'narrow', min: 1, value: 5 });
  let curveNames = null;
  async function loadCurveNames() {
    const done = await api(`/api/v1/sweeps/${encodeURIComponent(name)}/results?limit=1&where=state%3Ddone`);
    const row = (done.rows || [])[0];
    if (!row) return false;
    const series = (await api(`/api/v1/trials/${encodeURIComponent(row.trial_id)}/metrics`)).series || [];
    curveNames = series.map((c) => c.name).sort();
    for (const c of series) reports[c.name] = (c.steps || []).length;
    const fill = (select, value) => {
      select.replaceChildren(...curveNames.map((m) => el('option', { value: m, text: m })));
      select.value = value;
    };
    fill(matchedMetric, MATCHED_METRICS.find((m) => curveNames.includes(m)) || curveNames[0]);
    fill(matchedReference, curveNames.includes('train_loss') ? 'train_loss' : curveNames[0]);
    matchedWindow.value = defaultWindow(matchedReference.value);
    return true;
  }
  const header = el('div', { id: 'sweep-header' });
  const table = el('div', { id: 'trial-table' });
  const filter = el('input', { type: 'text', placeholder: 'filter: key=value, e.g. parameterization=FAFO', size: 40 });
  const stateFilter = el('select', {});
  for (const s of ['', 'queued', 'running', 'done', 'failed', 'diverged', 'preempted', 'cancelled', 'stopped_early'])
    stateFilter.append(el('option', { value: s, text: s || 'any state' }));
  replace(main,
    el('h1', { text: name }),
    header,
    el('div', { class: 'controls' },
      el('a', { href: `/api/v1/sweeps/${encodeURIComponent(name)}/export.csv`, text: 'export CSV' }),
      el('a', { href: `/api/v1/sweeps/${encodeURIComponent(name)}/export.json`, text: 'export JSON' })),
    el('div', { class: 'grid' },
      !showRatio ? null : el('div', { class: 'panel' },
        el('div', { class: 'controls' }, 'metric ', metricSelect(state.metric, (e) => { state.metric = e.target.value; refreshPlot(); })),
        el('div', {}, el('canvas', { id: 'ratio' }))),
      !showCurves ? null : el('div', { class: 'panel' },
        el('div', { class: 'controls' }, 'learning curves ', metricSelect(state.curveMetric, (e) => { state.curveMetric = e.target.value; refreshCurves(); }, curveMetrics),
          el('span', { class: 'muted', id: 'curves-note' })),
        el('div', {}, el('canvas', { id: 'curves' }))),
      !showRatio ? null : el('div', { class: 'panel', id: 'matched-panel' },
        el('div', { class: 'controls' }, 'matched ', matchedMetric, ' where ', matchedReference, ' = ', matchedLevels,
          ' window ', matchedWindow, el('button', { text: 'compare', onclick: () => { refreshMatched().catch((e) => showError(e.message)); } })),
        el('div', {}, el('canvas', { id: 'matched' })),
        el('p', { class: 'muted', id: 'matched-note' }))),
    el('div', { class: 'grid', id: 'paper-figures' }),
    el('h2', { text: 'Trials' }),
    el('div', { class: 'controls' }, stateFilter, filter,
      el('button', { text: 'apply', onclick: () => { applyFilter(); } })),
    table);

  function renderHeader(s) {
    const c = counts(s), t = throughput(s);
    replace(header, el('div', { class: 'controls' }, progressBar(s),
      el('span', { id: 'sweep-counts', text: `${c.done} done, ${c.running} running, ${c.queued + c.preempted} queued, ${c.failed + c.diverged} failed${c.stopped_early ? `, ${c.stopped_early} stopped early` : ''} of ${num(s.total_trials)}` }),
      el('span', { class: 'muted', text: `${t.eta === 'finished' ? 'finished' : `${t.perMin ? t.perMin.toFixed(1) : '-'} trials/min, ETA ${t.eta}`}, priority ${s.priority}${s.paused ? ', paused' : ''}${s.cancelled ? ', cancelled' : ''}` })),
      s.description ? el('p', { class: 'muted', text: s.description }) : null,
      searchTable(s));
  }
  async function refreshPlot() {
    if (!showRatio) return;
    const agg = await api(`/api/v1/sweeps/${encodeURIComponent(name)}/aggregate?by=parameterization,lr_ratio&metric=${encodeURIComponent(state.metric)}`);
    ratioChart(name, state.metric, agg);
  }
  async function refreshCurves() {
    if (!showCurves) return;
    const c = await api(`/api/v1/sweeps/${encodeURIComponent(name)}/curves?metric=${encodeURIComponent(state.curveMetric)}&limit=100&max_points=200`);
    curvesChart(state.curveMetric, c);
    $('#curves-note').textContent = num(c.total_trials) > 100 ? `first 100 of ${num(c.total_trials)} trials` : '';
  }
  // A metric where each trial's reference curve first reaches each level,
  // per arm, mean and 95% CI over seeds (docs/metrics.md, "Matched values").
  async function refreshMatched() {
    if (!showRatio) return;
    const note = $('#matched-note');
    if (!curveNames && !(await loadCurveNames())) {
      note.textContent = 'no finished trial yet';
      return;
    }
    const q = new URLSearchParams({ curve: matchedReference.value, metric: matchedMetric.value, window: matchedWindow.value || 1 });
    for (const l of matchedLevels.value.split(/[\s,]+/).filter((x) => x)) q.append('level', l);
    let m;
    try {
      m = await api(`/api/v1/sweeps/${encodeURIComponent(name)}/matched?${q}`);
    } catch (e) {
      // Not a page error: a level no trial reaches, a curve too short.
      note.textContent = visible(e.message);
      window.qkov.matched = { error: e.message };
      if (charts.matched) charts.matched.destroy();
      delete charts.matched;
      return;
    }
    matchedLevels.placeholder = `auto: ${(m.levels || []).map(fmt).join(', ')}`;
    const metric = matchedMetric.value;
    const arms = {};
    const points = [];
    for (const g of m.groups || []) {
      const arm = g.keys.join(' ');
      const s = (g.metrics || {})[metric] || {};
      const p = { arm, level: num(g.level), mean: num(s.mean), ci95: num(s.ci95), n: num(s.n),
        reached: num(g.reached), trials: num(g.trials), step: num((g.step || {}).mean) };
      points.push(p);
      (arms[arm] = arms[arm] || []).push(p);
    }
    window.qkov.matched = { response: m, points };
    const datasets = [];
    Object.entries(arms).forEach(([arm, ps], i) => {
      const color = (m.by.length === 1 && m.by[0] === 'parameterization' && COLORS[arm]) || R_COLORS[i % R_COLORS.length];
      const seen = ps.filter((p) => p.reached > 0);
      const band = (sign) => seen.map((p) => ({ x: p.level, y: Number.isFinite(p.ci95) ? p.mean + sign * p.ci95 : p.mean }));
      datasets.push({ label: `${arm} ci95-`, data: band(-1), borderWidth: 0, pointRadius: 0, fill: false, borderColor: color });
      datasets.push({ label: `${arm} ci95+`, data: band(1), borderWidth: 0, pointRadius: 0, fill: '-1', backgroundColor: `${color}33`, borderColor: color });
      datasets.push({ label: arm, borderColor: color, backgroundColor: color, pointRadius: 3,
        data: seen.map((p) => ({ x: p.level, y: p.mean, ci: p.ci95, reached: p.reached, trials: p.trials, step: p.step })) });
    });
    chart('matched', {
      type: 'line',
      data: { datasets },
      options: {
        animation: false, maintainAspectRatio: false,
        scales: { x: { type: 'linear', reverse: !!m.downwards, title: { display: true, text: `${m.reference} (mean of ${m.window} report${m.window === 1 ? '' : 's'})${m.downwards ? ', falling' : ''}` }, ticks: { callback: tick } },
                  y: { title: { display: true, text: `${metric} at the level (mean over seeds, 95% CI)` } } },
        plugins: {
          legend: { labels: { filter: (item) => !item.text.includes('ci95') } },
          tooltip: { filter: (item) => !item.dataset.label.includes('ci95'),
            callbacks: { label: (c) => `${c.dataset.label} at ${fmt(c.raw.x)}: ${fmt(c.raw.y)} ± ${fmt(c.raw.ci)}, ${c.raw.reached} of ${c.raw.trials} trials, step ${fmt(c.raw.step)}` } },
        },
      },
    });
    // Trials that never reach a level are counted, not dropped.
    const unreached = points.filter((p) => p.reached < p.trials);
    note.textContent = unreached.length
      ? `not reached: ${unreached.map((p) => `${p.arm} at ${fmt(p.level)} (${p.reached} of ${p.trials} trials reached it)`).join('; ')}`
      : 'every trial reached every level';
  }
  function applyFilter() {
    state.where = filter.value.split(/[\s,]+/).filter((w) => w.includes('='));
    if (stateFilter.value) state.where.push(`state=${stateFilter.value}`);
    state.offset = 0;
    refreshTable().catch((e) => showError(e.message));
  }
  async function refreshTable() {
    const q = new URLSearchParams({ offset: state.offset, limit: TABLE_PAGE });
    if (state.sort) { q.set('sort', state.sort); q.set('order', state.order); }
    for (const w of state.where) q.append('where', w);
    const page = await api(`/api/v1/sweeps/${encodeURIComponent(name)}/results?${q}`);
    const rows = page.rows || [];
    window.qkov.tableRows = rows;
    const cols = ['trial', ...(armColumn ? ['arm'] : []), 'parameterization', 'lr_ratio', 'eta_ov', 'seed', ...axisColumns, 'state',
      ...metrics.filter((m) => !axisColumns.includes(m))];
    const head = el('tr', {}, ...cols.map((c) => {
      const th = el('th', { class: 'sortable', text: c, onclick: () => {
        if (state.sort === c) state.order = state.order === 'asc' ? 'desc' : 'asc';
        else { state.sort = c; state.order = 'asc'; }
        refreshTable().catch((e) => showError(e.message));
      } });
      if (state.sort === c) th.classList.add('sorted', ...(state.order === 'desc' ? ['desc'] : []));
      return th;
    }));
    const body = rows.map((r) => el('tr', { 'data-trial': r.trial_id },
      el('td', {}, el('a', { href: `/trials/${encodeURIComponent(r.trial_id)}`, text: r.trial_id })),
      ...(armColumn ? [el('td', { text: r.config.arm || '' })] : []),
      el('td', { text: axisLabel(r) }),
      el('td', { class: 'num', text: fmt(r.config.lr_ratio) }),
      el('td', { class: 'num', text: fmt(r.config.eta_ov) }),
      el('td', { class: 'num', text: r.config.seed }),
      ...axisColumns.map((a) => el('td', { class: 'num', text: fmt(r.config[a]) })),
      el('td', { class: 'state', text: stateName(r.state) }),
      ...metrics.filter((m) => !axisColumns.includes(m)).map((m) => el('td', { class: 'num', text: fmt((r.values || {})[m]) }))));
    const total = num(page.total_rows);
    const pager = el('div', { class: 'controls' },
      el('button', { text: 'previous', disabled: state.offset === 0 ? '' : null, onclick: () => { state.offset = Math.max(0, state.offset - TABLE_PAGE); refreshTable(); } }),
      el('span', { id: 'table-range', text: total ? `${state.offset + 1}-${state.offset + rows.length} of ${total}` : 'no trials match' }),
      el('button', { text: 'next', disabled: state.offset + TABLE_PAGE >= total ? '' : null, onclick: () => { state.offset += TABLE_PAGE; refreshTable(); } }));
    table.replaceChildren(el('table', { id: 'trials' }, el('thead', {}, head), el('tbody', {}, ...body)), pager);
  }

  async function refreshFigures() {
    // The paper's figures of the task's kinds (client/figures.h names
    // them); a task that describes its own draws those.
    if (figures.includes('fixed')) return fixedAttentionFigures(name);
    const own = (task.curve_figures || []).filter((f) => figures.includes(f.kind));
    if (own.length) return curveFigures(name, own);
    return dtapGrid(name);
  }
  renderHeader(sweep);
  await Promise.all([refreshPlot(), refreshCurves(), refreshTable(), refreshFigures(), refreshMatched()]);
  markReady();
  let pending = null, plotStale = false, trailing = null;
  function redraw(plot) {
    window.qkov.keptUntil = 0;
    return Promise.all([refreshTable(), plot ? refreshPlot() : null, plot ? refreshFigures() : null, refreshCurves(),
      plot ? refreshMatched() : null])
      .then(() => {
        // Some replies were kept from before the change that asked for them:
        // draw once more when the server computes them again, in case no
        // later event comes.
        clearTimeout(trailing);
        const wait = (window.qkov.keptUntil || 0) - Date.now();
        if (wait > 0) trailing = setTimeout(() => redraw(true).catch((e) => showError(e.message)), wait + 50);
      });
  }
  follow(`/api/v1/events?sweep=${encodeURIComponent(name)}`, 'progress', (p) => {
    renderHeader(p.sweep);
    const updated = p.updated || [];
    if (!updated.length) return;
    // Final metrics change only when a trial ends.
    plotStale = plotStale || updated.some((t) => !['RUNNING', 'QUEUED'].includes(t.state));
    if (pending) return;
    // Coalesce: redraw at most once a second.
    pending = setTimeout(() => {
      const plot = plotStale;
      pending = null;
      plotStale = false;
      redraw(plot).catch((e) => showError(e.message));
    }, 1000);
  });
}

async function route() {
  const path = decodeURIComponent(location.pathname);
  const sweep = path.match(/^\/sweeps\/([^/]+)$/);
  const trial = path.match(/^\/trials\/([^/]+)$/);
  if (sweep) return sweepPage(sweep[1]);
  if (trial) return trialPage(trial[1]);
  return sweepsPage();
}

window.addEventListener('DOMContentLoaded', () => {
  route().catch((e) => { showError(e.message); markReady(); window.qkov.error = e.message; });
});
