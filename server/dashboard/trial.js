// The dashboard's trial page: a trial's config, attempts, results, heatmaps
// and curves. Loaded before app.js (index.html), whose helpers it calls
// once the page runs.
'use strict';

// The config as a sweep file writes it: YAML, lists inline.
function yaml(value, indent) {
  const pad = '  '.repeat(indent);
  if (Array.isArray(value)) return `[${value.map((v) => JSON.stringify(v)).join(', ')}]`;
  if (value && typeof value === 'object') {
    return Object.entries(value).map(([k, v]) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) return `${pad}${k}:\n${yaml(v, indent + 1)}`;
      return `${pad}${k}: ${yaml(v, indent + 1)}`;
    }).join('\n');
  }
  return typeof value === 'string' && /^[A-Za-z0-9_./-]+$/.test(value) ? value : JSON.stringify(value);
}

function heatmapTable(h) {
  const values = h.values || [];
  const nx = (h.x_edges || []).length - 1, ny = (h.y_edges || []).length - 1;
  const max = Math.max(1e-12, ...values.map(num));
  const t = el('table', { class: 'heat' });
  t.append(el('caption', { text: `${h.name} (${h.y_label} rows, ${h.x_label} columns, % of examples)` }));
  const head = el('tr', {}, el('th', { text: '' }));
  for (let i = 0; i < nx; i++) head.append(el('th', { text: `${fmt(h.x_edges[i])}-${fmt(h.x_edges[i + 1])}` }));
  t.append(head);
  for (let r = ny - 1; r >= 0; r--) {
    const tr = el('tr', {}, el('th', { text: `${fmt(h.y_edges[r])}-${fmt(h.y_edges[r + 1])}` }));
    for (let c = 0; c < nx; c++) {
      const v = num(values[r * nx + c]);
      const td = el('td', { text: fmt(v) });
      td.style.background = `rgba(37, 99, 235, ${(0.85 * v / max).toFixed(3)})`;
      if (v / max > 0.55) td.style.color = '#fff';
      tr.append(td);
    }
    t.append(tr);
  }
  return t;
}

async function trialPage(id) {
  const t = await api(`/api/v1/trials/${encodeURIComponent(id)}`);
  crumbs(['sweeps', '/'], [t.sweep_name, `/sweeps/${encodeURIComponent(t.sweep_name)}`], [id, null]);
  const m = await api(`/api/v1/trials/${encodeURIComponent(id)}/metrics`);
  const results = Object.entries(t.results || {}).sort();
  const main = $('#main');
  replace(main,
    el('h1', { text: `${id}: ${stateName(t.state)}` }),
    el('p', { class: 'muted', text: `sweep ${t.sweep_name}, trial ${t.ordinal}, ${t.attempts} attempt(s), last step ${t.last_step}, config hash ${t.config_hash}` }),
    el('div', { class: 'grid' },
      el('div', {}, el('h2', { text: 'Config' }), el('pre', { id: 'config', text: yaml(t.config, 0) })),
      el('div', {}, el('h2', { text: 'Final results' }),
        results.length ? el('table', { id: 'results' }, ...results.map(([k, v]) => el('tr', {}, el('td', { text: k }), el('td', { class: 'num', text: fmt(v) }))))
          : el('p', { class: 'muted', text: 'none yet' }))),
    el('h2', { text: 'Attempts' }),
    el('table', { id: 'attempts' },
      el('thead', {}, el('tr', {}, ...['attempt', 'worker', 'state', 'started', 'ended', 'error', 'provenance'].map((h) => el('th', { text: h })))),
      el('tbody', {}, ...(t.attempt_history || []).map((a) => el('tr', {},
        el('td', { class: 'num', text: a.attempt }), el('td', { text: a.worker_id }), el('td', { text: a.state }),
        el('td', { text: a.started_at || '-' }), el('td', { text: a.ended_at || '-' }),
        el('td', { class: a.error ? 'bad' : '', text: a.error || '' }),
        el('td', {}, a.provenance_json ? el('details', {}, el('summary', { text: 'show' }),
          el('pre', { text: JSON.stringify(JSON.parse(a.provenance_json), null, 2) })) : '-'))))),
    el('h2', { text: 'Curves' }),
    el('div', { class: 'grid', id: 'metric-charts' }),
    (t.heatmaps || []).length ? el('h2', { text: 'Heatmaps' }) : null,
    el('div', { class: 'grid' }, ...(t.heatmaps || []).map((h) => el('div', { class: 'panel' }, heatmapTable(h)))));
  const grid = $('#metric-charts');
  (m.series || []).forEach((s, i) => {
    const id = `metric-${i}`;
    grid.append(el('div', { class: 'panel' }, el('div', {}, el('canvas', { id }))));
    chart(id, {
      type: 'line',
      data: { datasets: [{ label: s.name, data: s.steps.map((st, j) => ({ x: num(st), y: num(s.values[j]) })), borderColor: '#2563eb', borderWidth: 1.5, pointRadius: 0 }] },
      options: { animation: false, maintainAspectRatio: false, scales: { x: { type: 'linear', title: { display: true, text: 'step' } } } },
    });
  });
  markReady();
  if (['QUEUED', 'RUNNING', 'PREEMPTED'].includes(t.state)) {
    let checked = 0;
    follow(`/api/v1/events?sweep=${encodeURIComponent(t.sweep_name)}`, 'progress', (p) => {
      const updated = p.updated || [];
      if (updated.some((u) => u.trial_id === id && u.state !== 'RUNNING')) return location.reload();
      // An event lists the 50 most recent changes only: in a busier sweep,
      // ask for the trial itself, at most every 2 s.
      if (updated.length < 50 || Date.now() - checked < 2000) return;
      checked = Date.now();
      api(`/api/v1/trials/${encodeURIComponent(id)}`).then((now) => {
        if (!['QUEUED', 'RUNNING', 'PREEMPTED'].includes(now.state)) location.reload();
      }).catch(() => {});
    });
  }
}
