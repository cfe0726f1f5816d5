// The dashboard's figures of the paper's tasks on a sweep page: the DTAP
// grid, the fixed-attention task, and the figures a task describes in the
// task table (the ODE's, with trained arms overlaid).
// Loaded before app.js (index.html), whose helpers ($, el, api, chart) they
// call once the page runs.
'use strict';

function figurePanel(id, title) {
  const grid = $('#paper-figures');
  let panel = document.getElementById(`${id}-panel`);
  if (!panel) {
    panel = el('div', { class: 'panel', id: `${id}-panel` }, el('div', { class: 'controls', text: title }),
      el('div', {}, el('canvas', { id })));
    grid.append(panel);
  }
  return panel;
}

function lineChart(id, datasets, xTitle, yTitle, { logX = false, logY = false, reverseX = false } = {}) {
  chart(id, {
    type: 'line',
    data: { datasets },
    options: {
      animation: false, maintainAspectRatio: false,
      scales: {
        x: { type: logX ? 'logarithmic' : 'linear', reverse: reverseX, title: { display: true, text: xTitle }, ticks: { callback: tick } },
        y: { type: logY ? 'logarithmic' : 'linear', title: { display: true, text: yTitle }, ticks: { callback: tick } },
      },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: (${fmt(c.raw.x)}, ${fmt(c.raw.y)})` } } },
    },
  });
}

const R_COLORS = ['#1d4ed8', '#0891b2', '#16a34a', '#d97706', '#dc2626', '#7c3aed', '#db2777', '#4b5563'];

// The DTAP grid: each (parameterization, ratio)'s heatmap, mean over seeds,
// parameterizations in rows and ratios in columns (as qkov plot draws it).
async function dtapGrid(name) {
  const resp = await api(`/api/v1/sweeps/${encodeURIComponent(name)}/heatmaps?name=dtap`);
  const groups = resp.groups || [];
  window.qkov.dtapGroups = groups.length;
  let panel = document.getElementById('dtap-panel');
  if (!groups.length) {
    if (panel) panel.remove();
    return;
  }
  const params = [...new Set(groups.map((g) => g.parameterization))];
  const ratios = [...new Set(groups.map((g) => Number(g.lr_ratio)))].sort((a, b) => a - b);
  const at = Object.fromEntries(groups.map((g) => [`${g.parameterization} ${Number(g.lr_ratio)}`, g]));
  const grid = el('table', { id: 'dtap-grid' },
    el('tr', {}, el('th', { text: '' }), ...ratios.map((r) => el('th', { text: `ratio ${fmt(r)}` }))),
    ...params.map((p) => el('tr', {}, el('th', { text: p === 'PARAMETERIZATION_UNSPECIFIED' ? '-' : p }),
      ...ratios.map((r) => {
        const g = at[`${p} ${r}`];
        if (!g) return el('td', { text: '' });
        const t = heatmapTable(g.mean);
        t.querySelector('caption').textContent = `n = ${g.n}`;
        return el('td', {}, t);
      }))));
  const box = el('div', { class: 'panel', id: 'dtap-panel' },
    el('div', { class: 'controls', text: 'DTAP grid: % of examples per (attention on the task tokens, gold probability) bin, mean over seeds; rows high to low probability' }),
    el('div', { class: 'scroll' }, grid));
  if (panel) panel.replaceWith(box);
  else $('#paper-figures').append(box);
}

// Fig. 3: final loss against alpha per parameterization, and its slope.
async function fixedAttentionFigures(name) {
  const agg = await api(`/api/v1/sweeps/${encodeURIComponent(name)}/aggregate?by=parameterization,alpha&metric=loss&where=state%3Ddone`);
  const byParam = {};
  for (const g of agg.groups || []) {
    const m = g.metrics.loss;
    if (!m || num(m.n) === 0 || g.keys[1] === '') continue;
    (byParam[g.keys[0]] = byParam[g.keys[0]] || []).push({ x: Number(g.keys[1]), y: num(m.mean) });
  }
  const loss = [], slope = [];
  window.qkov.fixedAttention = byParam;
  for (const [param, ps] of Object.entries(byParam)) {
    ps.sort((a, b) => a.x - b.x);
    const ov = param.endsWith('CO') ? 'collapsed OV' : param.endsWith('FO') ? 'factorized OV' : '';
    const label = ov ? `${ov} (${param})` : param;
    const color = COLORS[param] || '#111827';
    loss.push({ label, data: ps, borderColor: color, backgroundColor: color });
    slope.push({ label, borderColor: color, backgroundColor: color,
      data: ps.slice(1).map((p, i) => ({ x: (p.x + ps[i].x) / 2, y: -(p.y - ps[i].y) / (p.x - ps[i].x) })) });
  }
  figurePanel('fig3-loss', 'Fig. 3: final loss against the fixed attention alpha (mean over seeds)');
  lineChart('fig3-loss', loss, 'alpha', 'final loss', { logY: true });
  figurePanel('fig3-slope', 'Fig. 3: -dL/dalpha between adjacent alphas');
  lineChart('fig3-slope', slope, 'alpha (midpoint)', '-dL/dalpha');
}

// A task's own figures, drawn from their description in the task table
// (common/task_info.h, CurveFigure; the ODE's Fig. 4): one chart per panel,
// one line per finished trial labelled by its r, through the points where
// the trial reported the x curve and the panel's curve at the same step.
// A figure marked overlay_matched gets the list of trained sweeps on its
// first panel (?overlay=SWEEP): their arms' distinct-token attention at
// matched training loss, dashed.
async function curveFigures(name, figures) {
  const metrics = [...new Set(figures.flatMap((f) => [f.x, ...f.panels.map((p) => p.y)]))];
  const replies = await Promise.all(metrics.map((metric) =>
    api(`/api/v1/sweeps/${encodeURIComponent(name)}/curves?metric=${encodeURIComponent(metric)}&limit=50&max_points=400`)));
  // curves[metric][trial_id]: step -> value.
  const curves = {};
  const trialsById = {};
  metrics.forEach((metric, i) => {
    curves[metric] = {};
    for (const c of replies[i].curves || []) {
      trialsById[c.trial_id] = c;
      curves[metric][c.trial_id] = Object.fromEntries(c.series.steps.map((st, k) => [st, num(c.series.values[k])]));
    }
  });
  const rOf = (c) => Number(c.config.lr_ratio);
  const trials = Object.values(trialsById).sort((a, b) => rOf(a) - rOf(b));
  const overlay = new URLSearchParams(location.search).get('overlay');
  const arms = figures.some((f) => f.overlay_matched) && overlay ? await trainedArms(overlay) : null;
  window.qkov.overlayPoints = arms ? arms.points : null;
  let panelsDrawn = 0;
  for (const f of figures) {
    const xs = curves[f.x];
    for (const [p, panel] of f.panels.entries()) {
      const ys = curves[panel.y];
      const datasets = trials.map((t, i) => {
        const x = xs[t.trial_id] || {}, y = ys[t.trial_id] || {};
        const data = Object.keys(x).filter((st) => st in y)
          .map((st) => ({ x: f.x_log10_1p ? Math.log10(1 + x[st]) : x[st], y: y[st] }));
        return { label: `r = ${fmt(rOf(t))}`, borderColor: R_COLORS[i % R_COLORS.length], pointRadius: 0, borderWidth: 1.5, data };
      });
      const id = `${f.name}-${p}`;
      const box = figurePanel(id, f.panels.length > 1 ? `${f.title}: ${panel.label}` : f.title);
      if (f.overlay_matched && p === 0) {
        if (arms) datasets.push(...arms.datasets);
        const controls = box.querySelector('.controls');
        controls.title = 'dashed: a trained sweep, distinct-token attention where its training loss (mean of 5 reports) first reaches each level, mean over seeds';
        if (!box.querySelector('select')) controls.append(await overlaySelect(name, figures, overlay));
      }
      lineChart(id, datasets, f.x_label, panel.label, { logX: f.log_x, logY: panel.log_y, reverseX: f.reverse_x });
      panelsDrawn++;
    }
  }
  window.qkov.curveFigurePanels = panelsDrawn;
  window.qkov.curveFigureTrials = trials.length;
}

// Each trained arm's distinct-token attention at matched training loss (the
// trailing mean of 5 reports), as `qkov results --matched` gives it.
async function trainedArms(overlay) {
  const m = await api(`/api/v1/sweeps/${encodeURIComponent(overlay)}/matched?curve=train_loss&window=5` +
    '&metric=distinct_attention&by=parameterization,lr_ratio');
  const arms = {};
  for (const g of m.groups || []) {
    const s = g.metrics.distinct_attention;
    if (num(g.reached) === 0) continue;
    (arms[g.keys.join(' r=')] = arms[g.keys.join(' r=')] || []).push({ x: num(g.level), y: num(s.mean), reached: num(g.reached), trials: num(g.trials) });
  }
  const datasets = [], points = [];
  for (const [arm, ps] of Object.entries(arms)) {
    const color = COLORS[arm.split(' ')[0]] || '#111827';
    datasets.push({ label: `${overlay}: ${arm}`, borderColor: color, backgroundColor: color, borderDash: [4, 3], pointRadius: 4, data: ps });
    points.push(...ps.map((p) => ({ ...p, label: arm })));
  }
  return { datasets, points };
}

// The trained sweeps to overlay (?overlay=SWEEP in the URL): sweeps whose
// task reports curves at training steps (the task table, app.js's taskOf).
async function overlaySelect(name, figures, overlay) {
  const list = await api('/api/v1/sweeps');
  const sweeps = list.sweeps || [];
  const tasks = await Promise.all(sweeps.map((s) => taskOf(((s.spec || {}).training || {}).task)));
  const trained = sweeps.filter((s, i) => tasks[i].curves.length > 0);
  const select = el('select', { id: 'overlay', onchange: (e) => {
    const q = new URLSearchParams(location.search);
    if (e.target.value) q.set('overlay', e.target.value); else q.delete('overlay');
    history.replaceState(null, '', `${location.pathname}${q.size ? `?${q}` : ''}`);
    curveFigures(name, figures).catch((err) => showError(err.message));
  } }, el('option', { value: '', text: '(none)' }),
  ...trained.map((s) => el('option', { value: s.name, text: s.name })));
  select.value = overlay || '';
  return select;
}
