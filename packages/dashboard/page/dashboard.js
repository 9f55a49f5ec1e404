// The dashboard page: one WebSocket to the app (Tachyon's protocol), a `stats` event per
// interval with the whole view, tables rebuilt from it and three uPlot charts. Every value
// from the server goes into the page as text (textContent), never as HTML: topic names and
// routes come from clients.
(() => {
  const POINTS = 120;
  const $ = (id) => document.getElementById(id);
  const fmt = (n, digits = 0) => (typeof n === 'number' ? n.toLocaleString('en', { maximumFractionDigits: digits }) : '–');
  const mb = (bytes) => fmt(bytes / 1048576, 1);

  // Time series for the charts: [times, ...series].
  const series = { http: [[], [], []], conn: [[], []], ws: [[], [], []] };
  const charts = {};
  function chart(id, labels, data) {
    const el = $(id);
    const opts = {
      width: Math.max(el.clientWidth, 300),
      height: 180,
      series: [{}, ...labels.map(([label, stroke, scale]) => ({ label, stroke, width: 2, scale: scale || 'y' }))],
      axes: [{}, { scale: 'y' }, ...(labels.some((l) => l[2] === 'ms') ? [{ scale: 'ms', side: 1, grid: { show: false } }] : [])],
    };
    return new uPlot(opts, data, el);
  }
  function push(name, values) {
    const s = series[name];
    s[0].push(Date.now() / 1000);
    for (const [i, v] of values.entries()) s[i + 1].push(v);
    if (s[0].length > POINTS) for (const a of s) a.shift();
    charts[name]?.setData(s);
  }

  function rows(tableId, items, cells) {
    const body = $(tableId).tBodies[0];
    body.replaceChildren(
      ...items.map((item) => {
        const tr = document.createElement('tr');
        for (const c of cells(item)) {
          const td = document.createElement('td');
          if (c instanceof Node) td.append(c);
          else td.textContent = c;
          tr.append(td);
        }
        return tr;
      }),
    );
  }

  let ws = null;
  let ref = 0;
  function actionButton(label, event, data, notice) {
    const b = document.createElement('button');
    b.textContent = label;
    b.dataset.action = event;
    b.addEventListener('click', () => {
      if (notice) $('notice').textContent = notice;
      ws?.send(JSON.stringify({ type: 'event', event, data, ref: ++ref }));
    });
    return b;
  }
  const disconnectButton = (s) => actionButton('disconnect', 'disconnect', { worker: s.worker, id: s.id });
  // Draining the worker this page is on closes the page's socket too: it reconnects to another.
  const drainButton = (w) => actionButton('drain', 'drain', { worker: w.worker }, `worker ${w.worker} draining…`);

  function render(v) {
    $('connections').textContent = fmt(v.connections);
    $('rps').textContent = fmt(v.rps, 1);
    $('ws-in').textContent = fmt(v.ws.inPerSec, 1);
    $('ws-out').textContent = fmt(v.ws.outPerSec, 1);
    $('publishes').textContent = fmt(v.ws.publishesPerSec, 1);
    $('slow').textContent = `${fmt(v.ws.dropped)} / ${fmt(v.ws.slowClosed)}`;
    const bus = v.workerStats.every((w) => w.busReady);
    $('bus').textContent = bus ? 'bus ready' : 'bus down';
    $('bus').className = bus ? 'badge' : 'badge off';
    $('cluster').textContent =
      v.workers > 0
        ? `cluster: ${v.workers} workers${v.missing.length ? `, ${v.missing.length} not answering (${v.missing.join(', ')})` : ''}`
        : 'single process';
    rows('routes', v.routes, (r) => [r.route, fmt(r.rps, 1), fmt(r.p50, 2), fmt(r.p90, 2), fmt(r.p99, 2), fmt(r.errors)]);
    $('topic-count').textContent = v.topicCount > v.topics.length ? `(${v.topics.length} of ${v.topicCount})` : '';
    rows('topics', v.topics, (t) => [
      t.topic,
      fmt(t.subscribers),
      t.presence === null ? '–' : fmt(t.presence),
      t.history === null ? '–' : fmt(t.history),
    ]);
    rows('workers', v.workerStats, (w) => [
      w.worker === 0 ? 'process' : String(w.worker),
      fmt(w.cpu, 1),
      mb(w.heapUsed),
      mb(w.rss),
      fmt(w.eld.p99, 1),
      fmt(w.connections),
      fmt(w.inflight),
      v.actions && w.worker !== 0 ? drainButton(w) : '',
    ]);
    rows('closes', Object.entries(v.closes), ([code, n]) => [code, fmt(n)]);
    $('sockets-panel').hidden = !v.actions;
    if (v.actions)
      rows('sockets', v.sockets, (s) => [
        String(s.worker),
        String(s.id),
        s.ip,
        fmt(s.topics),
        s.dashboard ? 'a dashboard' : disconnectButton(s),
      ]);
    const p99 = v.routes.reduce((m, r) => Math.max(m, r.p99), 0);
    push('http', [v.rps, p99]);
    push('conn', [v.connections]);
    push('ws', [v.ws.inPerSec, v.ws.outPerSec]);
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
  }

  function connect() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    ws = new WebSocket(`${scheme}//${location.host}${document.body.dataset.ws}`);
    ws.onopen = () => {
      $('status').textContent = 'live';
      $('status').className = 'badge';
    };
    ws.onclose = () => {
      $('status').textContent = 'disconnected';
      $('status').className = 'badge off';
      setTimeout(connect, 2000);
    };
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m.event === 'stats') render(m.data);
      else if (m.type === 'reply')
        $('notice').textContent =
          m.data.drained !== undefined
            ? `worker ${m.data.drained} drained and replaced`
            : m.data.closed
              ? 'socket disconnected'
              : 'socket not found (already gone?)';
      else if (m.type === 'error') $('notice').textContent = `refused: ${m.message}`;
    };
  }

  charts.http = chart(
    'chart-http',
    [
      ['req/s', '#2563eb'],
      ['p99 ms', '#dc2626', 'ms'],
    ],
    series.http,
  );
  charts.conn = chart('chart-conn', [['connections', '#16a34a']], series.conn);
  charts.ws = chart(
    'chart-ws',
    [
      ['in/s', '#7c3aed'],
      ['out/s', '#ea580c'],
    ],
    series.ws,
  );
  connect();
})();
