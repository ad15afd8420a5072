// vouch console. Plain DOM: every untrusted string enters the page through
// textContent (via el()), never as markup. No framework, no network access
// beyond this service.
'use strict';

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const SVG = 'http://www.w3.org/2000/svg';
const FEED_MAX = 300;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// Times in the viewer's own time zone.
const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dateTimeFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
function when(ms) {
  const d = new Date(ms);
  const today = new Date();
  const text = d.toDateString() === today.toDateString() ? timeFmt.format(d) : dateTimeFmt.format(d);
  return el('time', { datetime: d.toISOString(), title: dateTimeFmt.format(d) }, text);
}

function setStatus(text) { document.getElementById('status').textContent = text; }

async function api(path, body) {
  const init = { credentials: 'same-origin', headers: { 'Accept': 'application/json' } };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.headers['X-CSRF-Token'] = CSRF;
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401) { location.reload(); throw new Error('signed out'); }
  const text = await response.text();
  let value = null;
  try { value = text ? JSON.parse(text) : null; } catch (_) { value = null; }
  if (!response.ok) {
    const message = value && value.error ? value.error.message : ('HTTP ' + response.status);
    throw new Error(message);
  }
  return value;
}

// ---- tabs (arrow keys move between them, as a tablist should) ----
const tabs = Array.from(document.querySelectorAll('[role=tab]'));
function select(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute('aria-selected', String(on));
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
  }
  if (tab.id === 'tab-audit' && !auditLoaded) loadAudit();
  history.replaceState(null, '', '#' + tab.id.slice(4));
}
tabs.forEach((t, i) => {
  t.addEventListener('click', () => select(t));
  t.addEventListener('keydown', (e) => {
    let j = null;
    if (e.key === 'ArrowRight') j = (i + 1) % tabs.length;
    if (e.key === 'ArrowLeft') j = (i - 1 + tabs.length) % tabs.length;
    if (e.key === 'Home') j = 0;
    if (e.key === 'End') j = tabs.length - 1;
    if (j !== null) { e.preventDefault(); tabs[j].focus(); select(tabs[j]); }
  });
});

// ---- pending denials ----
let limits = null;
function riskBadge(risk) {
  return risk ? el('span', { class: 'badge risk-' + risk, text: risk }) : null;
}

function approvalText(a) {
  if (a.state === 'pending') return 'approved — retry allowed until ';
  if (a.state === 'used') return 'approved retry was used';
  return null;
}

function denialCard(d) {
  const card = el('article', { class: 'card', 'data-hash': d.request_hash, 'data-session': d.session_id, 'aria-label': 'denial ' + d.request_hash.slice(0, 12) });
  const top = el('div', { class: 'top' },
    riskBadge(d.risk_level), el('span', {}, when(d.created_at_ms)),
    el('span', {}, 'session ', el('code', { text: d.session_id })),
    el('span', {}, 'turn ', el('code', { text: d.turn_id })),
    el('span', { text: d.surface }),
    d.cwd ? el('span', {}, 'in ', el('code', { text: d.cwd })) : null);
  const actions = el('div', { class: 'actions' });
  const note = el('span', { class: 'hint', role: 'status' });
  const state = approvalText(d.approval);
  if (d.remedy === 'approve') {
    if (d.approval.state === 'available') {
      const b = el('button', { class: 'approve', text: 'Approve exact retry' });
      b.addEventListener('click', async () => {
        b.disabled = true;
        try {
          const a = await api('/console/api/approve', { session_id: d.session_id, request_hash: d.request_hash });
          note.textContent = '';
          note.append('Approved: the exact retry is allowed once until ', when(a.expires_at_ms), '.');
          b.remove();
          refresh();
        } catch (e) { note.textContent = 'Not approved: ' + e.message; b.disabled = false; }
      });
      actions.append(b);
    } else if (d.approval.state === 'pending') {
      note.append(state, when(d.approval.expires_at_ms));
    } else { note.textContent = state; }
  } else if (d.remedy === 'break_glass') {
    if (d.approval.state === 'pending') {
      note.append('break glass used — allowed once until ', when(d.approval.expires_at_ms));
    } else if (d.approval.state === 'used') {
      note.textContent = 'break glass was used';
    } else {
      const b = el('button', { class: 'danger break-glass', text: 'Break glass…' });
      b.addEventListener('click', () => breakGlass(d, b));
      actions.append(b);
    }
  } else {
    note.textContent = limits && !limits.break_glass_enabled
      ? 'critical: break glass is disabled in the configuration'
      : 'critical: older than the break-glass window';
  }
  actions.append(note);
  card.append(top, el('code', { class: 'summary', text: d.summary }), el('p', { class: 'why', text: d.rationale }), actions);
  return card;
}

function renderDenials(denials) {
  const list = document.getElementById('pending-list');
  list.replaceChildren(...denials.map(denialCard));
  document.getElementById('pending-empty').hidden = denials.length > 0;
  const open = denials.filter((d) => d.approval.state === 'available' && d.remedy !== 'none').length;
  document.getElementById('pending-count').textContent = open ? String(open) : '';
}

// ---- break glass ----
const dialog = document.getElementById('glass');
let glassTimer = null;
async function breakGlass(d, opener) {
  let challenge;
  try {
    challenge = await api('/console/api/break-glass', { session_id: d.session_id, request_hash: d.request_hash });
  } catch (e) { alert('Break glass not started: ' + e.message); return; }
  document.getElementById('glass-session').textContent = challenge.denial.session_id;
  document.getElementById('glass-summary').textContent = challenge.denial.summary;
  document.getElementById('glass-rationale').textContent = challenge.denial.rationale;
  document.getElementById('glass-phrase').textContent = challenge.phrase;
  const input = document.getElementById('glass-input');
  const error = document.getElementById('glass-error');
  const confirm = document.getElementById('glass-confirm');
  input.value = ''; error.textContent = ''; confirm.disabled = false;
  const timer = document.getElementById('glass-timer');
  clearInterval(glassTimer);
  const tick = () => {
    const left = Math.max(0, Math.ceil((challenge.expires_at_ms - Date.now()) / 1000));
    timer.textContent = left + ' s left';
    if (left === 0) { confirm.disabled = true; error.textContent = 'Expired. Cancel and start again.'; clearInterval(glassTimer); }
  };
  tick();
  glassTimer = setInterval(tick, 1000);
  const form = document.getElementById('glass-form');
  form.onsubmit = async (e) => {
    e.preventDefault();
    if (e.submitter && e.submitter.id === 'glass-cancel') { dialog.close(); return; }
    confirm.disabled = true;
    try {
      await api('/console/api/break-glass/confirm', { session_id: d.session_id, challenge_id: challenge.id, phrase: input.value });
      clearInterval(glassTimer);
      dialog.close();
      setStatus('Break glass confirmed: the exact action is allowed once.');
      refresh();
    } catch (err) {
      // One attempt per challenge, as in the terminal: a wrong phrase spends it.
      error.textContent = err.message;
    }
  };
  dialog.onclose = () => { clearInterval(glassTimer); if (opener && opener.isConnected) opener.focus(); };
  dialog.showModal();
  input.focus();
}

// ---- sessions ----
function meter(value, max) {
  const m = el('span', { class: 'meter' + (value >= max ? ' full' : ''), role: 'img', 'aria-label': value + ' of ' + max });
  m.append(el('span', { style: null }));
  m.firstChild.style.width = Math.min(100, max ? (100 * value) / max : 0) + '%';
  return m;
}

function renderTurns(turns) {
  const table = document.getElementById('sessions-table');
  const body = table.querySelector('tbody');
  body.replaceChildren(...turns.map((t) => el('tr', { 'data-session': t.session_id },
    el('td', {}, el('code', { text: t.session_id })),
    el('td', {}, el('code', { text: t.turn_id })),
    el('td', {}, t.reviews + ' / ' + limits.max_reviews, meter(t.reviews, limits.max_reviews)),
    el('td', {}, t.failures + ' / ' + limits.max_failures, meter(t.failures, limits.max_failures)),
    el('td', {}, t.consecutive_denials + ' / ' + limits.consecutive_denials),
    el('td', {}, t.breaker_open ? el('span', { class: 'open', text: 'open' }) : 'closed'),
    el('td', {}, when(t.updated_at_ms)))));
  table.hidden = turns.length === 0;
  document.getElementById('sessions-empty').hidden = turns.length > 0;
}

let refreshing = false;
async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    const o = await api('/console/api/overview');
    limits = o.limits;
    renderDenials(o.denials);
    renderTurns(o.turns);
  } catch (e) { setStatus('Could not load: ' + e.message); }
  finally { refreshing = false; }
}

// ---- live feed ----
const liveList = document.getElementById('live-list');
const onlyBlocking = document.getElementById('live-only-blocking');
function feedItem(f) {
  const cls = f.abstain ? 'abstain' : f.decision;
  const li = el('li', { class: cls + ' feed-item', 'data-hash': f.request_hash, 'data-decision': f.decision });
  const stats = f.model ? [f.model, (f.input_tokens || 0) + '+' + (f.output_tokens || 0) + ' tokens', (f.duration_ms || 0) + ' ms'].join(' · ') : null;
  const parts = [
    el('div', { class: 'meta' },
      when(f.at_ms),
      el('strong', { class: 'out-' + f.decision, text: f.abstain ? 'no opinion' : f.decision }),
      el('span', { text: 'stage ' + f.stage + (f.rule_id ? ' · rule ' + f.rule_id : '') }),
      riskBadge(f.risk_level),
      f.fault ? el('span', { class: 'badge', text: 'fault ' + f.fault }) : null,
      el('span', {}, 'session ', el('code', { text: f.session_id }), ' turn ', el('code', { text: f.turn_id })),
      f.source ? el('span', { text: f.source + (f.agent ? ' / ' + f.agent : '') }) : null,
      stats ? el('span', { text: stats }) : null),
    el('code', { class: 'line summary', text: f.surface + ': ' + f.summary }),
    f.rationale ? el('span', { class: 'line', text: f.rationale }) : null,
    f.suggestion ? el('span', { class: 'line hint', text: 'Safer: ' + f.suggestion }) : null];
  // append(null) would add the text "null".
  li.append(...parts.filter((p) => p));
  li.hidden = onlyBlocking.checked && f.decision === 'allow';
  return li;
}
function addFeed(node) {
  liveList.prepend(node);
  while (liveList.children.length > FEED_MAX) liveList.lastChild.remove();
  document.getElementById('live-empty').hidden = true;
}
onlyBlocking.addEventListener('change', () => {
  for (const li of liveList.children) li.hidden = onlyBlocking.checked && li.dataset.decision === 'allow';
});
document.getElementById('live-clear').addEventListener('click', () => liveList.replaceChildren());

function connect() {
  const source = new EventSource('/console/api/events');
  const state = document.getElementById('live-state');
  source.onopen = () => { setStatus('Live'); state.textContent = 'Connected.'; };
  source.addEventListener('decision', (e) => {
    let f;
    try { f = JSON.parse(e.data); } catch (_) { return; }
    addFeed(feedItem(f));
    if (f.decision === 'deny' || f.stage === 'override' || f.stage === 'break_glass') refresh();
  });
  source.addEventListener('missed', (e) => {
    addFeed(el('li', { class: 'missed', text: e.data + ' events missed (this view fell behind)' }));
  });
  source.onerror = () => { setStatus('Live feed disconnected; retrying…'); state.textContent = 'Reconnecting…'; };
}

// ---- audit charts ----
let auditLoaded = false;
function barChart(container, rows, opts) {
  // rows: [{label, values: {series: n}}]; horizontal bars, one row each.
  const series = opts.series;
  const rowH = 22, labelW = opts.labelWidth || 150, width = 420, pad = 6;
  const max = Math.max(1, ...rows.map((r) => series.reduce((s, k) => s + (r.values[k] || 0), 0)));
  const height = Math.max(rowH, rows.length * rowH) + pad * 2;
  const s = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': opts.title });
  s.append(svg('title', {}, opts.title));
  rows.forEach((r, i) => {
    const y = pad + i * rowH;
    const label = r.label.length > 22 ? r.label.slice(0, 21) + '…' : r.label;
    const t = svg('text', { x: labelW - 6, y: y + 15, 'text-anchor': 'end' }, label);
    t.append(svg('title', {}, r.label));
    s.append(t);
    let x = labelW;
    let total = 0;
    for (const k of series) {
      const v = r.values[k] || 0;
      total += v;
      const w = ((width - labelW - 50) * v) / max;
      if (w > 0) s.append(svg('rect', { x, y: y + 3, width: w, height: rowH - 6, class: 's-' + k }));
      x += w;
    }
    s.append(svg('text', { x: x + 4, y: y + 15 }, total));
  });
  container.replaceChildren(s);
  if (opts.legend) {
    container.append(el('div', { class: 'legend' }, ...opts.legend.map(([k, name]) => el('span', {}, el('i', { class: 'l-' + k }), name))));
  }
  if (rows.length === 0) container.replaceChildren(el('p', { class: 'empty', text: 'Nothing recorded in this window.' }));
}

async function loadAudit() {
  auditLoaded = true;
  const days = document.getElementById('audit-days').value;
  const targetSel = document.getElementById('audit-target');
  const min = document.getElementById('audit-min').value || '3';
  const q = new URLSearchParams({ days, min_count: min, top: '10' });
  if (targetSel.value) q.set('target', targetSel.value);
  let v;
  try { v = await api('/console/api/audit?' + q); } catch (e) {
    document.getElementById('audit-summary').textContent = 'Could not load the audit: ' + e.message; return;
  }
  if (!targetSel.options.length) {
    for (const t of v.targets) targetSel.append(el('option', { value: t, text: t }));
    targetSel.value = v.report.suggestions.target;
  }
  const r = v.report;
  document.getElementById('audit-summary').textContent =
    `${r.totals.observations} decisions from ${r.window.from} to ${r.window.to} (UTC days), every project.`;
  barChart(document.getElementById('chart-days'),
    v.days.map((d) => ({ label: d.day, values: { defer: d.by_result.defer || 0, deny: d.by_result.deny || 0 } })),
    { title: 'Asks and denials per day', series: ['defer', 'deny'], labelWidth: 90, legend: [['defer', 'asks (deferred to a human)'], ['deny', 'denials']] });
  barChart(document.getElementById('chart-subjects'),
    r.top_subjects.map((s) => ({ label: s.subject || '(' + s.kind + ')', values: { deny: s.by_result.deny || 0, defer: s.by_result.defer || 0, allow: (s.by_result.allow || 0) + (s.by_result.abstain || 0) } })),
    { title: 'Top subjects', series: ['deny', 'defer', 'allow'], labelWidth: 150, legend: [['deny', 'denied'], ['defer', 'asked'], ['allow', 'allowed']] });
  barChart(document.getElementById('chart-sources'),
    Object.entries(r.totals.by_source).sort((a, b) => b[1] - a[1]).map(([k, n]) => ({ label: k || '(unknown)', values: { bar: n } })),
    { title: 'Decisions by harness', series: ['bar'], labelWidth: 110 });
  const sg = r.suggestions;
  document.getElementById('rules-where').textContent = `For ${sg.target}: merge into ${sg.file} (${sg.format}). ${sg.documentation}`;
  const has = sg.snippet && sg.snippet.length > 0;
  document.getElementById('rules-empty').hidden = has;
  document.getElementById('rules-block').hidden = !has;
  document.getElementById('rules-snippet').textContent = sg.snippet;
  document.getElementById('rules-notes').replaceChildren(...sg.notes.map((n) => el('li', { text: n })));
}
document.getElementById('audit-form').addEventListener('submit', (e) => { e.preventDefault(); loadAudit(); });
document.getElementById('rules-copy').addEventListener('click', async () => {
  const text = document.getElementById('rules-snippet').textContent;
  const out = document.getElementById('rules-copied');
  try { await navigator.clipboard.writeText(text); out.textContent = 'Copied.'; }
  catch (_) {
    const range = document.createRange();
    range.selectNodeContents(document.getElementById('rules-snippet'));
    const sel = getSelection(); sel.removeAllRanges(); sel.addRange(range);
    out.textContent = 'Selected; press Ctrl+C to copy.';
  }
});

document.getElementById('logout').addEventListener('click', async () => {
  try { await api('/console/api/logout', {}); } catch (_) { /* signed out either way */ }
  location.assign('/console');
});

// ---- start ----
const initial = document.getElementById('tab-' + location.hash.slice(1));
if (initial) select(initial);
connect();
refresh();
setInterval(refresh, 5000);
