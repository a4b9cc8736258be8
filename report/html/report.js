// SPDX-License-Identifier: MIT
// The HTML report's script (preport -format html): draws the data the page carries, offline.
// Plain JavaScript, no library: the page must open from file:// with no network.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("pcollect-data").textContent);
  const NM = D.metrics.length, NR = D.results.length, DIFF = NR === 2;
  const T = D.tree, N = T.depth.length;
  // DEEP_W: the narrowest frame that makes the graph taller (a deep stack of frames under it,
  // an import chain at a pixel, would leave rows of blank canvas: zoom in to see them).
  const ROW = 18, MIN_W = 0.4, DEEP_W = 2;

  // ---- the tree: parents from the depths (depth-first order), values unscaled ----
  const parent = new Int32Array(N), end = new Int32Array(N), fnOf = Int32Array.from(T.fn);
  {
    const stack = [];
    for (let i = 0; i < N; i++) {
      const d = T.depth[i];
      stack.length = d;
      parent[i] = d ? stack[d - 1] : -1;
      stack.push(i);
    }
    for (let i = N - 1; i >= 0; i--) end[i] = Math.max(end[i], i + 1);
    for (let i = N - 1; i > 0; i--) if (end[i] > end[parent[i]]) end[parent[i]] = end[i];
  }
  // Series s = side * NM + metric: self and total per node.
  const NS = NR * NM, self = [], total = [];
  for (let s = 0; s < NS; s++) {
    const k = s % NM, sc = D.metrics[k].scale;
    const a = new Float64Array(N), t = new Float64Array(N);
    for (let i = 0; i < N; i++) a[i] = T.self[s][i] * sc;
    for (let i = 0; i < N; i++) t[i] = a[i] + (T.other ? T.other[s][i] * sc : 0);
    for (let i = N - 1; i > 0; i--) t[parent[i]] += t[i];
    self.push(a);
    total.push(t);
  }
  const fnName = (f) => (f < 0 ? "[total]" : D.names[D.functions[f][0]]);
  const fnModule = (f) => (f < 0 ? "" : D.modules[D.functions[f][1]]);
  const fnFile = (f) => (f < 0 || D.functions[f][2] < 0 ? "" : D.files[D.functions[f][2]]);
  const fnKind = (f) => (f < 0 ? 2 : D.functions[f][4]);
  const nodesOf = new Map(); // function -> its nodes
  for (let i = 1; i < N; i++) {
    let l = nodesOf.get(fnOf[i]);
    if (!l) nodesOf.set(fnOf[i], (l = []));
    l.push(i);
  }

  // ---- state ----
  const st = {
    metric: Math.max(0, D.metrics.findIndex((m) => m.main)),
    side: NR - 1, // the result widths follow (a difference: Result 2)
    by: "value", // a difference's colour: change in the metric's unit, or in share points
    zoom: 0,
    fn: -1, // the selected function
    search: "",
    sortCol: null,
    sortDesc: true,
  };
  const ser = (side) => side * NM + st.metric;
  // Views drawn by views.js: called on "select", "search", "metric" and "resize".
  const hooks = [];
  const notify = (what) => hooks.forEach((h) => h(what));

  // ---- formatting: as preport's text (seconds with ms, bytes 1024-based) ----
  function fmt(v, k) {
    const u = D.metrics[k === undefined ? st.metric : k].unit;
    if (u === "ns") return (v / 1e9).toFixed(3) + "s";
    if (u === "bytes") return fmtBytes(v);
    return String(Math.round(v));
  }
  function fmtBytes(v) {
    const a = Math.abs(v);
    if (a < 1024) return Math.round(v) + " B";
    const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let x = a, i = -1;
    while (x >= 1024 && i < units.length - 1) { x /= 1024; i++; }
    return (v < 0 ? "-" : "") + x.toFixed(1) + " " + units[i];
  }
  const pct = (v, s) => { const t = D.metrics[s % NM].total[Math.floor(s / NM)]; return t > 0 ? (100 * v / t).toFixed(1) + "%" : ""; };
  const signed = (v) => (v > 0 ? "+" : "") + fmt(v);
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  }
  function el(tag, attrs, html) {
    const e = document.createElement(tag);
    if (attrs) for (const a in attrs) e.setAttribute(a, attrs[a]);
    if (html !== undefined) e.innerHTML = html;
    return e;
  }

  // ---- the page ----
  const app = document.getElementById("app");
  app.innerHTML = "";
  const header = el("header");
  header.appendChild(el("h1", { title: D.title }, esc((DIFF ? "Difference: " : "") + D.title)));
  const metricSel = el("select", { id: "metric", "aria-label": "metric" });
  D.metrics.forEach((m, k) => metricSel.appendChild(el("option", { value: k }, esc(m.name))));
  metricSel.value = st.metric;
  const lab = el("label", null, "Metric ");
  lab.appendChild(metricSel);
  header.appendChild(lab);
  if (DIFF) {
    const sideSel = el("select", { id: "side", "aria-label": "widths" });
    // Widths of Result 1 draw the frames Result 2 no longer has: the reverse view.
    sideSel.appendChild(el("option", { value: 1 }, "new code: widths of Result 2"));
    sideSel.appendChild(el("option", { value: 0 }, "removed code: widths of Result 1"));
    const l2 = el("label", null, "Widths ");
    l2.appendChild(sideSel);
    header.appendChild(l2);
    sideSel.addEventListener("change", () => { st.side = +sideSel.value; drawFlame(); notify("metric"); });
    const bySel = el("select", { id: "colour-by", "aria-label": "colour by" });
    bySel.appendChild(el("option", { value: "value" }, "change in the metric"));
    bySel.appendChild(el("option", { value: "share" }, "change in share of the total"));
    const l3 = el("label", null, "Colour ");
    l3.appendChild(bySel);
    header.appendChild(l3);
    bySel.addEventListener("change", () => { st.by = bySel.value; drawFlame(); });
  }
  const search = el("input", { id: "search", type: "search", placeholder: "Search functions (regexp)", "aria-label": "search" });
  header.appendChild(search);
  const match = el("span", { id: "match" });
  header.appendChild(match);
  const reset = el("button", { id: "reset", type: "button" }, "Reset zoom");
  header.appendChild(reset);
  document.body.insertBefore(header, app);

  const main = el("main");
  app.appendChild(main);
  const secSummary = el("section", { id: "summary" });
  const secFlame = el("section", { id: "flame-section" });
  const secChanges = el("section", { id: "changes" });
  const grid = el("div", { class: "grid" });
  const colL = el("div"), colR = el("div");
  grid.appendChild(colL);
  grid.appendChild(colR);
  const secHot = el("section", { id: "hotspots" });
  const secCallers = el("section", { id: "callers" });
  const secBottom = el("section", { id: "bottomup" });
  const secSource = el("section", { id: "source" });
  const secTimeline = el("section", { id: "timeline" });
  const secMemory = el("section", { id: "memory" });
  // The hotspots take the page's width: function, file and line fit at 1400 px.
  colL.appendChild(secCallers);
  colL.appendChild(secBottom);
  colR.appendChild(secSource);
  [secSummary, secMemory, secFlame, secChanges, secHot, grid, secTimeline].forEach((s) => main.appendChild(s));

  // ---- summary ----
  function drawSummary() {
    const bySection = new Map();
    for (const r of D.summary) {
      if (!bySection.has(r[0])) bySection.set(r[0], []);
      bySection.get(r[0]).push(r);
    }
    let h = "<details open><summary><h2 style='display:inline'>Summary</h2> <span class='note'>" +
      esc(D.results.join(" vs ")) + "</span></summary><div class='sections'>";
    for (const [sec, rows] of bySection) {
      h += "<div><h3>" + esc(sec) + "</h3><dl>";
      for (const r of rows) {
        let v = r[2];
        if (r[3] === "s") v += "s";
        else if (r[3] === "%") v += "%";
        else if (r[3]) v += " " + r[3];
        if (r[4]) v += " (" + r[4] + "%)";
        h += "<dt>" + esc(r[1]) + "</dt><dd>" + esc(v) + "</dd>";
      }
      h += "</dl></div>";
    }
    if (D.dropped) h += "<p class='note'>" + D.dropped + " small call paths are drawn as part of their callers (the page keeps the heaviest).</p>";
    secSummary.innerHTML = h + "</div></details>";
  }

  // ---- flame graph (an icicle: outermost frames on top) ----
  secFlame.innerHTML = "<h2>Flame graph <span class='note'>(click a frame to zoom; top row: the whole profile)</span></h2>";
  const depthBox = el("label", { class: "depth" }, "Depth ");
  const flameDepth = el("input", { id: "flame-depth", type: "number", min: "1", placeholder: "all", "aria-label": "flame graph depth" });
  depthBox.appendChild(flameDepth);
  depthBox.appendChild(el("span", { class: "note", id: "flame-hidden" }));
  secFlame.appendChild(depthBox);
  flameDepth.addEventListener("input", () => drawFlame());
  const crumbs = el("div", { class: "crumbs", id: "crumbs" });
  secFlame.appendChild(crumbs);
  const wrap = el("div", { id: "flame-wrap" });
  const canvas = el("canvas", { id: "flame" });
  wrap.appendChild(canvas);
  secFlame.appendChild(wrap);
  const legend = el("div", { class: "legend note", id: "diff-legend" });
  if (DIFF) secFlame.appendChild(legend);
  const tip = el("div", { id: "tip" });
  document.body.appendChild(tip);
  function showTip(ev, text) {
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 8) + "px";
    tip.style.top = ev.clientY + 14 + "px";
  }
  let rects = []; // drawn frames: [x, y, w, node]
  let matched = null; // search: per node true when its function matches

  function hue(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return h;
  }
  function colour(node, drawnTotal) {
    const f = fnOf[node];
    if (matched && matched[node]) return "#e055c2";
    if (DIFF) {
      let a = total[st.metric][node], b = total[NM + st.metric][node];
      let ref = Math.max(total[st.metric][0], total[NM + st.metric][0]) || 1;
      if (st.by === "share") {
        // Shares compare runs of different lengths: each frame against its own run's total.
        a /= total[st.metric][0] || 1;
        b /= total[NM + st.metric][0] || 1;
        ref = 1;
      }
      const d = (b - a) / Math.max(Math.abs(a), Math.abs(b), ref * 0.002);
      if (Math.abs(d) < 0.02) return "#d8d8d8";
      const v = Math.min(1, Math.abs(d));
      const light = Math.round(85 - 35 * v);
      return d > 0 ? "hsl(8,75%," + light + "%)" : "hsl(215,70%," + light + "%)";
    }
    const k = fnKind(f), h = hue(fnName(f));
    if (node === 0 || k === 2) return "#c9ccd2";
    if (k === 1) return "hsl(" + (150 + (h % 50)) + ",55%," + (58 + (h >> 8) % 14) + "%)";
    return "hsl(" + (h % 45) + ",85%," + (58 + (h >> 8) % 14) + "%)";
  }

  function unitName() {
    const u = D.metrics[st.metric].unit;
    return u === "ns" ? "seconds" : u === "bytes" ? "bytes" : "counts";
  }
  function drawLegend() {
    const m = D.metrics[st.metric].name, s0 = ser(0), s1 = ser(1);
    const unit = st.by === "share"
      ? "in share points (each frame's share of its own result's total: Result 1 " + fmt(total[s0][0]) + ", Result 2 " + fmt(total[s1][0]) + ")"
      : "in " + unitName() + " of " + m;
    legend.innerHTML = "Colour: the change of each frame's total, Result 2 - Result 1, " + esc(unit) +
      ": <span style='background:#e0533d'></span>more in Result 2 <span style='background:#4f86d9'></span>less in Result 2 <span style='background:#d8d8d8'></span>unchanged. Widths: " +
      (st.side ? "Result 2 (code only Result 1 ran is not drawn)" : "removed code: widths of Result 1");
  }

  function drawFlame() {
    if (DIFF) drawLegend();
    const s = ser(st.side), t = total[s];
    const width = Math.max(300, wrap.clientWidth);
    const z = st.zoom, zt = t[z] || 1;
    const x = new Float64Array(N);
    // The depth control: levels below the zoomed frame (empty: all).
    const limit = +flameDepth.value > 0 ? T.depth[z] + Math.floor(+flameDepth.value) : Infinity;
    let maxDepth = T.depth[z], deepest = maxDepth;
    // The frames of the zoomed subtree, widths relative to its total.
    let drawn = [];
    for (let a = parent[z]; a >= 0; a = parent[a]) drawn.push([0, a, width]);
    x[z] = 0;
    const next = new Float64Array(N);
    for (let i = z; i < end[z];) {
      const w = t[i] / zt * width;
      if (i !== z) {
        const p = parent[i];
        x[i] = next[p];
        next[p] += w;
      }
      if (w < MIN_W || T.depth[i] > limit) { i = end[i]; continue; }
      next[i] = x[i];
      drawn.push([x[i], i, w]);
      if (w >= DEEP_W && T.depth[i] > maxDepth) maxDepth = T.depth[i];
      if (T.depth[i] > deepest) deepest = T.depth[i];
      i++;
    }
    // The height follows the frames one can see; thinner ones deeper are left out, and said.
    if (deepest > maxDepth) drawn = drawn.filter((q) => T.depth[q[1]] <= maxDepth);
    document.getElementById("flame-hidden").textContent = deepest > maxDepth ? " " + (deepest - maxDepth) + " deeper levels of frames under " + DEEP_W + " px not drawn: zoom in to see them" : "";
    const dpr = window.devicePixelRatio || 1, height = (maxDepth + 1) * ROW;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.height = height + "px";
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    g.font = "12px system-ui, sans-serif";
    g.textBaseline = "middle";
    rects = [];
    for (const [x0, node, w] of drawn) {
      const y = T.depth[node] * ROW;
      g.fillStyle = colour(node);
      g.globalAlpha = node !== z && T.depth[node] < T.depth[z] ? 0.55 : 1;
      g.fillRect(x0, y, Math.max(w - 0.5, 0.5), ROW - 1);
      if (st.fn >= 0 && fnOf[node] === st.fn) {
        g.strokeStyle = "#1d1f23";
        g.lineWidth = 1.5;
        g.strokeRect(x0 + 0.75, y + 0.75, Math.max(w - 2, 0.5), ROW - 2.5);
      }
      g.globalAlpha = 1;
      if (w > 28) {
        let label = node ? fnName(fnOf[node]) : "all (" + fmt(t[0]) + ")";
        const room = w - 6;
        if (g.measureText(label).width > room) {
          let n = Math.floor(label.length * room / g.measureText(label).width) - 2;
          label = n > 1 ? label.slice(0, n) + ".." : "";
        }
        g.fillStyle = "#111";
        g.fillText(label, x0 + 3, y + ROW / 2);
      }
      rects.push([x0, y, w, node]);
    }
    crumbs.innerHTML = "";
    const path = [];
    for (let a = z; a >= 0; a = parent[a]) path.unshift(a);
    path.forEach((a, i) => {
      const b = el("button", { type: "button" }, esc(a ? fnName(fnOf[a]) : "all"));
      b.addEventListener("click", () => zoomTo(a));
      if (i) crumbs.appendChild(document.createTextNode(" > "));
      crumbs.appendChild(b);
    });
  }

  function hit(ev) {
    const r = canvas.getBoundingClientRect();
    const x = ev.clientX - r.left, y = ev.clientY - r.top;
    for (const q of rects) if (x >= q[0] && x < q[0] + q[2] && y >= q[1] && y < q[1] + ROW) return q[3];
    return -1;
  }
  function describe(node) {
    const lines = [node ? fnName(fnOf[node]) : "all"];
    if (node && fnModule(fnOf[node])) lines.push(fnModule(fnOf[node]) + (fnFile(fnOf[node]) ? "  " + fnFile(fnOf[node]) : ""));
    for (let side = 0; side < NR; side++) {
      const s = ser(side), pre = DIFF ? "Result " + (side + 1) + ": " : "";
      lines.push(pre + D.metrics[st.metric].name + " total " + fmt(total[s][node]) + " (" + pct(total[s][node], s) + "), self " + fmt(self[s][node]));
    }
    if (DIFF) lines.push("Difference: " + signed(total[ser(1)][node] - total[ser(0)][node]));
    return lines.join("\n");
  }
  canvas.addEventListener("mousemove", (ev) => {
    const n = hit(ev);
    if (n < 0) { tip.style.display = "none"; return; }
    showTip(ev, describe(n));
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  canvas.addEventListener("click", (ev) => {
    const n = hit(ev);
    if (n < 0) return;
    zoomTo(n);
    if (n) select(fnOf[n]);
  });
  function zoomTo(n) { st.zoom = n; drawFlame(); }
  reset.addEventListener("click", () => zoomTo(0));

  // ---- search: a regular expression (or plain text) over function names ----
  function applySearch() {
    const q = search.value.trim();
    st.search = q;
    if (!q) { matched = null; match.textContent = ""; drawFlame(); drawHot(); notify("search"); return; }
    let re;
    try { re = new RegExp(q, "i"); } catch (e) { re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
    matched = new Uint8Array(N);
    const fnMatch = new Map();
    for (let i = 1; i < N; i++) {
      const f = fnOf[i];
      if (!fnMatch.has(f)) fnMatch.set(f, re.test(fnName(f)));
      matched[i] = fnMatch.get(f) ? 1 : 0;
    }
    // Each sample once: the matched frames with no matched frame above them.
    const s = ser(st.side);
    let sum = 0;
    for (let i = 1; i < N;) {
      if (matched[i]) { sum += total[s][i]; i = end[i]; } else i++;
    }
    match.textContent = "Matched: " + (total[s][0] > 0 ? (100 * sum / total[s][0]).toFixed(1) : "0.0") + "%";
    drawFlame();
    drawHot();
    notify("search");
  }
  search.addEventListener("input", applySearch);

  // ---- hotspots: every function's self and total (exact, from preport) ----
  const NF = D.functions.length;
  function hotVal(kind, side, f, k) { return D.hot[kind][side * NM + (k === undefined ? st.metric : k)][f]; }
  // The metric that counts the calls behind the chosen one (docs/schema.md): MPI calls, waits,
  // allocations; samples count no calls, so CPU Time has none.
  const CALLS = { "MPI Time": "MPI Calls", "MPI Calls": "MPI Calls", "Bytes Sent": "MPI Calls", "Bytes Received": "MPI Calls",
    "Wait Time": "Wait Count", "Wait Count": "Wait Count", "Allocated Bytes": "Allocations", "Allocations": "Allocations" };
  function callsMetric() {
    const c = CALLS[D.metrics[st.metric].name];
    return c ? D.metrics.findIndex((m) => m.name === c) : -1;
  }
  // A long path keeps its end (the file's name), the whole of it in the cell's title.
  const leftCut = (v, n) => (v.length > n ? "\u2026" + v.slice(v.length - n + 1) : v);
  const fileCols = [
    ["Source File", (f) => fnFile(f), false, (v) => leftCut(v, 40), "file"],
    ["Line", (f) => (f < 0 ? 0 : D.functions[f][3]), true, (v) => (v > 0 ? String(v) : "")],
  ];
  function hotColumns() {
    const m = D.metrics[st.metric].name, ck = callsMetric();
    const calls = ck < 0 ? [] : [["Calls", (f) => hotVal("self", 0, f, ck), true, (v) => String(Math.round(v)), "num calls"]];
    if (!DIFF) return [
      ["Function", (f) => fnName(f), false],
      [m + ":Self", (f) => hotVal("self", 0, f), true],
      [m + ":Self %", (f) => hotVal("self", 0, f), true, (v) => pct(v, ser(0))],
      [m + ":Total", (f) => hotVal("total", 0, f), true],
      [m + ":Total %", (f) => hotVal("total", 0, f), true, (v) => pct(v, ser(0))],
      ...calls,
      ...fileCols,
      ["Module", (f) => fnModule(f), false],
    ];
    return [
      ["Function", (f) => fnName(f), false],
      [m + ":Self:Result 1", (f) => hotVal("self", 0, f), true],
      [m + ":Self:Result 2", (f) => hotVal("self", 1, f), true],
      [m + ":Self:Difference", (f) => hotVal("self", 1, f) - hotVal("self", 0, f), true, signed],
      [m + ":Total:Result 1", (f) => hotVal("total", 0, f), true],
      [m + ":Total:Result 2", (f) => hotVal("total", 1, f), true],
      [m + ":Total:Difference", (f) => hotVal("total", 1, f) - hotVal("total", 0, f), true, signed],
      ...fileCols,
      ["Module", (f) => fnModule(f), false],
    ];
  }
  function drawHot() {
    const cols = hotColumns();
    let ci = cols.findIndex((c) => c[0] === st.sortCol);
    if (ci < 0) ci = DIFF ? 3 : 1;
    const key = cols[ci][1];
    let fns = [];
    for (let f = 0; f < NF; f++) {
      if (fnKind(f) === 2) continue;
      let any = false;
      for (let side = 0; side < NR; side++) any = any || hotVal("total", side, f) || hotVal("self", side, f);
      if (any) fns.push(f);
    }
    if (matched) {
      const re = new RegExp(st.search.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
      let rx = null;
      try { rx = new RegExp(st.search, "i"); } catch (e) { rx = re; }
      fns = fns.filter((f) => rx.test(fnName(f)));
    }
    const num = cols[ci][2];
    fns.sort((a, b) => {
      let va = key(a), vb = key(b);
      if (DIFF && ci === 3) { va = Math.abs(va); vb = Math.abs(vb); }
      if (va === vb) return a - b;
      const c = num ? vb - va : String(va).localeCompare(String(vb));
      return st.sortDesc ? c : -c;
    });
    const LIMIT = 500;
    let h = "<h2>Hotspots <span class='note'>(" + fns.length + " functions" + (fns.length > LIMIT ? ", the first " + LIMIT + " shown" : "") + "; click a header to sort, a row to select)</span></h2><div class='scroll'><table id='hot-table'><thead><tr>";
    cols.forEach((c, i) => { h += "<th class='sort" + (c[2] ? " num" : "") + "' data-col='" + i + "'>" + esc(c[0]) + (i === ci ? (st.sortDesc ? " \u25be" : " \u25b4") : "") + "</th>"; });
    h += "</tr></thead><tbody>";
    for (const f of fns.slice(0, LIMIT)) {
      h += "<tr class='row" + (f === st.fn ? " selected" : "") + "' data-fn='" + f + "'>";
      cols.forEach((c) => {
        const v = c[1](f);
        const shown = c[3] ? c[3](v) : c[2] ? fmt(v) : v;
        const cls = c[4] || (c[2] ? "num" + (c[3] === signed ? (v > 0 ? " pos" : v < 0 ? " neg" : "") : "") : "name");
        h += "<td class='" + cls + "' title='" + esc(c[2] ? shown : v) + "'>" + esc(shown) + "</td>";
      });
      h += "</tr>";
    }
    secHot.innerHTML = h + "</tbody></table></div>";
    secHot.querySelectorAll("th.sort").forEach((th) => th.addEventListener("click", () => {
      const c = cols[+th.dataset.col][0];
      if (st.sortCol === c || (st.sortCol === null && +th.dataset.col === ci)) st.sortDesc = !st.sortDesc;
      else { st.sortCol = c; st.sortDesc = true; }
      st.sortCol = c;
      drawHot();
    }));
    secHot.querySelectorAll("tr.row").forEach((tr) => tr.addEventListener("click", () => select(+tr.dataset.fn)));
    const sel = secHot.querySelector("tr.selected");
    if (sel && sel.scrollIntoView) sel.scrollIntoView({ block: "nearest" });
  }

  // ---- a difference's largest changes: functions by the absolute change of their self value ----
  function drawChanges() {
    if (!DIFF) return;
    const m = D.metrics[st.metric].name, TOP = 20;
    const tot = [D.metrics[st.metric].total[0], D.metrics[st.metric].total[1]];
    const share = (side, f) => (tot[side] > 0 ? 100 * hotVal("self", side, f) / tot[side] : 0);
    const fns = [];
    for (let f = 0; f < NF; f++) {
      if (fnKind(f) === 2) continue;
      if (hotVal("self", 0, f) !== hotVal("self", 1, f)) fns.push(f);
    }
    const change = (f) => hotVal("self", 1, f) - hotVal("self", 0, f);
    fns.sort((a, b) => Math.abs(change(b)) - Math.abs(change(a)) || fnName(a).localeCompare(fnName(b)));
    const pts = (v) => (v > 0 ? "+" : "") + v.toFixed(1);
    let h = "<h2>Largest changes <span class='note'>(" + esc(m) + ":Self, Result 2 - Result 1; " + fns.length + " functions changed" + (fns.length > TOP ? ", the " + TOP + " largest shown" : "") + "; shares in % of each result's total)</span></h2><div class='scroll'><table id='changes-table'><thead><tr>";
    for (const c of ["Function", "Status", "Result 1", "Result 2", "Change", "Share 1", "Share 2", "Change (points)"]) h += "<th" + (c === "Function" || c === "Status" ? "" : " class='num'") + ">" + esc(c) + "</th>";
    h += "</tr></thead><tbody>";
    for (const f of fns.slice(0, TOP)) {
      const a = hotVal("self", 0, f), b = hotVal("self", 1, f), d = b - a, dp = share(1, f) - share(0, f);
      const status = !a ? "added" : !b ? "removed" : "";
      const cls = (v) => "num" + (v > 0 ? " pos" : v < 0 ? " neg" : "");
      h += "<tr class='row" + (f === st.fn ? " selected" : "") + "' data-fn='" + f + "'><td class='name'>" + esc(fnName(f)) + "</td><td>" + status + "</td><td class='num'>" + fmt(a) + "</td><td class='num'>" + fmt(b) + "</td><td class='" + cls(d) + "'>" + signed(d) + "</td><td class='num'>" + share(0, f).toFixed(1) + "%</td><td class='num'>" + share(1, f).toFixed(1) + "%</td><td class='" + cls(dp) + "'>" + pts(dp) + "</td></tr>";
    }
    secChanges.innerHTML = h + "</tbody></table></div>";
    secChanges.querySelectorAll("tr.row").forEach((tr) => tr.addEventListener("click", () => select(+tr.dataset.fn)));
  }

  // ---- callers and callees of the selected function: each sample once per edge ----
  function edgeAbove(node, callerFn, calleeFn) {
    // True when an outer call from callerFn to calleeFn is on node's path already.
    for (let c = node; c > 0 && parent[c] >= 0; c = parent[c]) {
      const p = parent[c];
      if (p > 0 && fnOf[c] === calleeFn && fnOf[p] === callerFn) return true;
    }
    return false;
  }
  function callersOf(F) {
    const callers = new Map(), callees = new Map();
    const add = (m, f, side, tot, sf) => {
      let e = m.get(f);
      if (!e) m.set(f, (e = { total: new Float64Array(NR), self: new Float64Array(NR) }));
      e.total[side] += tot;
      e.self[side] += sf;
    };
    for (const x of nodesOf.get(F) || []) {
      const p = parent[x];
      for (let side = 0; side < NR; side++) {
        const s = ser(side);
        if (p > 0) add(callers, fnOf[p], side, edgeAbove(p, fnOf[p], F) ? 0 : total[s][x], self[s][x]);
        for (let c = x + 1; c < end[x]; c = end[c]) {
          if (parent[c] !== x) continue;
          add(callees, fnOf[c], side, edgeAbove(x, F, fnOf[c]) ? 0 : total[s][c], self[s][c]);
        }
      }
    }
    return { callers, callees };
  }
  function drawCallers() {
    const F = st.fn;
    if (F < 0) { secCallers.innerHTML = "<h2>Callers and callees</h2><p class='note'>Select a function: click a frame of the flame graph or a row of the hotspots.</p>"; return; }
    const { callers, callees } = callersOf(F);
    const m = D.metrics[st.metric].name;
    let h = "<h2>Callers and callees of " + esc(fnName(F)) + "</h2><div class='scroll'><table id='callers-table'><thead><tr><th>Function</th><th>Relation</th>";
    for (let side = 0; side < NR; side++) h += "<th class='num'>" + esc(m + ":Total" + (DIFF ? ":Result " + (side + 1) : "")) + "</th><th class='num'>" + esc(m + ":Self" + (DIFF ? ":Result " + (side + 1) : "")) + "</th>";
    h += "</tr></thead><tbody>";
    const row = (f, rel, tot, sf) => {
      let r = "<tr class='row rel-" + rel + (f === F ? " selected" : "") + "' data-fn='" + f + "'><td class='name'>" + esc(fnName(f)) + "</td><td class='rel'>" + rel + "</td>";
      for (let side = 0; side < NR; side++) r += "<td class='num'>" + fmt(tot[side]) + "</td><td class='num'>" + fmt(sf[side]) + "</td>";
      return r + "</tr>";
    };
    const sorted = (mp) => [...mp.entries()].sort((a, b) => b[1].total[st.side] - a[1].total[st.side] || a[0] - b[0]);
    for (const [f, e] of sorted(callers)) h += row(f, "caller", e.total, e.self);
    const tf = [], sf = [];
    for (let side = 0; side < NR; side++) { tf.push(hotVal("total", side, F)); sf.push(hotVal("self", side, F)); }
    h += row(F, "function", tf, sf);
    for (const [f, e] of sorted(callees)) h += row(f, "callee", e.total, e.self);
    secCallers.innerHTML = h + "</tbody></table></div>";
    secCallers.querySelectorAll("tr.row").forEach((tr) => tr.addEventListener("click", () => select(+tr.dataset.fn)));
  }

  // ---- bottom-up: the selected function's self value split by the paths that called it ----
  function drawBottomUp() {
    const F = st.fn;
    if (F < 0) { secBottom.innerHTML = "<h2>Bottom-up</h2><p class='note'>Select a function to see the call paths that lead to it.</p>"; return; }
    const s = ser(st.side);
    const root = { fn: F, v: 0, kids: new Map() };
    for (const x of nodesOf.get(F) || []) {
      const v = self[s][x];
      if (!v) continue;
      root.v += v;
      let cur = root;
      for (let p = parent[x]; p > 0; p = parent[p]) {
        let k = cur.kids.get(fnOf[p]);
        if (!k) cur.kids.set(fnOf[p], (k = { fn: fnOf[p], v: 0, kids: new Map() }));
        k.v += v;
        cur = k;
      }
    }
    let h = "<h2>Bottom-up: " + esc(fnName(F)) + " <span class='note'>(its self " + esc(D.metrics[st.metric].name) + " by calling path" + (DIFF ? ", Result " + (st.side + 1) : "") + ")</span></h2><div class='scroll'><table id='bottomup-table'><thead><tr><th>Function Stack</th><th class='num'>Self</th><th class='num'>Self %</th></tr></thead><tbody>";
    let rows = 0;
    const walk = (n, depth) => {
      if (rows++ > 400) return;
      h += "<tr class='row' data-fn='" + n.fn + "'><td class='name' style='padding-left:" + (8 + 14 * depth) + "px'>" + esc(fnName(n.fn)) + "</td><td class='num'>" + fmt(n.v) + "</td><td class='num'>" + pct(n.v, s) + "</td></tr>";
      [...n.kids.values()].sort((a, b) => b.v - a.v).forEach((k) => walk(k, depth + 1));
    };
    walk(root, 0);
    secBottom.innerHTML = h + "</tbody></table></div>";
    secBottom.querySelectorAll("tr.row").forEach((tr) => tr.addEventListener("click", () => select(+tr.dataset.fn)));
  }

  // ---- source of the selected function, with each line's values ----
  const lineVals = new Map(); // "file:line" -> [self per metric..., total per metric...]
  for (const l of D.lines) lineVals.set(l[0] + ":" + l[1], l.slice(2));
  const sourceOf = new Map();
  for (const s of D.sources) sourceOf.set(s[0], s);
  function drawSource() {
    const F = st.fn;
    if (F < 0) { secSource.innerHTML = "<h2>Source</h2><p class='note'>Select a function to see its source with the values of each line.</p>"; return; }
    const src = sourceOf.get(F);
    if (!src) {
      secSource.innerHTML = "<h2>Source: " + esc(fnName(F)) + "</h2><p class='note'>Not in this page: " + (fnFile(F) ? "the source of " + esc(fnFile(F)) + " was not found when the page was made (preport -source-search-dir DIR), or the function is not among the heaviest whose source the page carries." : "the function has no source position (built without -g?).") + "</p>";
      return;
    }
    const [, file, first, text] = src, k = st.metric, sc = D.metrics[k].scale;
    let maxSelf = 0;
    const vals = text.map((_, i) => lineVals.get(file + ":" + (first + i)));
    for (const v of vals) if (v && v[k] * sc > maxSelf) maxSelf = v[k] * sc;
    let h = "<h2>Source: " + esc(fnName(F)) + " <span class='note'>" + esc(D.files[file]) + (DIFF ? " (Result 1's lines)" : "") + "</span></h2><div class='scroll'><table class='src' id='source-table'><thead><tr><th class='num'>Line</th><th class='num'>Self</th><th class='num'>Total</th><th>Source</th></tr></thead><tbody>";
    text.forEach((line, i) => {
      const v = vals[i], sv = v ? v[k] * sc : 0, tv = v ? v[NM + k] * sc : 0;
      const heat = maxSelf > 0 && sv > 0 ? "background:rgba(230,80,40," + (0.12 + 0.5 * sv / maxSelf).toFixed(2) + ")" : "";
      h += "<tr" + (sv ? " class='hot'" : "") + " style='" + heat + "'><td class='num'>" + (first + i) + "</td><td class='num'>" + (v ? fmt(sv) : "") + "</td><td class='num'>" + (v ? fmt(tv) : "") + "</td><td class='code'>" + esc(line) + "</td></tr>";
    });
    secSource.innerHTML = h + "</tbody></table></div>";
  }

  // ---- timeline: per thread, the metric in slices of the run ----
  function drawTimeline() {
    const tl = D.timeline;
    if (!tl) { secTimeline.innerHTML = DIFF ? "" : "<h2>Timeline</h2><p class='note'>The result has no timeline.</p>"; return; }
    const k = st.metric, span = tl.end - tl.start;
    secTimeline.innerHTML = "<h2>Timeline <span class='note'>(" + esc(D.metrics[k].name) + " per thread over " + (span / 1e9).toFixed(3) + "s of the run" + (tl.more ? "; " + tl.more + " lighter threads not shown" : "") + ")</span></h2>";
    let max = 0;
    for (const t of tl.threads) for (const v of t.values[k]) if (v > max) max = v;
    const width = Math.max(200, secTimeline.clientWidth - 200);
    for (const t of tl.threads) lane(secTimeline, t.name, t.values[k], max, k, "214,72,40", "", width);
  }
  // A lane of the timeline in box: the slices' values vals (scaled, metric k) shaded by their
  // share of max in colour ("r,g,b"), a tooltip per slice; cls: the row's extra class.
  function lane(box, name, vals, max, k, colour, cls, width) {
    const tl = D.timeline, sc = D.metrics[k].scale, bin = (tl.end - tl.start) / tl.bins;
    const row = el("div", { class: "timeline-row" + (cls ? " " + cls : "") });
    row.appendChild(el("div", { class: "lane-name", title: name }, esc(name)));
    const c = el("canvas");
    row.appendChild(c);
    box.appendChild(row);
    const w = c.clientWidth || width, dpr = window.devicePixelRatio || 1;
    c.width = Math.round(w * dpr);
    c.height = Math.round(16 * dpr);
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = "#f0f1f4";
    g.fillRect(0, 0, w, 16);
    for (let i = 0; i < vals.length; i++) {
      if (!vals[i]) continue;
      const a = max ? vals[i] / max : 0;
      g.fillStyle = "rgba(" + colour + "," + (0.15 + 0.85 * a).toFixed(3) + ")";
      g.fillRect(i * w / vals.length, 0, Math.max(w / vals.length, 1), 15);
    }
    c.addEventListener("mousemove", (ev) => {
      const r = c.getBoundingClientRect(), i = Math.floor((ev.clientX - r.left) / r.width * vals.length);
      if (i < 0 || i >= vals.length) return;
      showTip(ev, name + "\n" + ((i * bin) / 1e9).toFixed(3) + "s to " + (((i + 1) * bin) / 1e9).toFixed(3) + "s: " + fmt(vals[i] * sc, k));
    });
    c.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  }

  // ---- memory over time: per process, its live heap (area) and resident set (line) ----
  const MEM_H = 140, MEM_PAD = 4, HEAP = "rgba(42,98,201,0.35)", HEAP_EDGE = "#2a62c9", RSS = "#5d6470";
  const memDrawn = []; // per process: what was drawn where, for scripts and tests
  // The value of a step series at time t: its last point at or before t (null before its first).
  function at(s, t) {
    let lo = 0, hi = s.t.length - 1, r = -1;
    while (lo <= hi) { const m = (lo + hi) >> 1; if (s.t[m] <= t) { r = m; lo = m + 1; } else hi = m - 1; }
    return r < 0 ? null : s.v[r];
  }
  // Trace a step series (each point holds until the next) along the current path.
  function steps(g, s, X, Y) {
    for (let i = 0; i < s.t.length; i++) {
      const x = X(s.t[i]), xn = i + 1 < s.t.length ? X(s.t[i + 1]) : x + 1;
      g.lineTo(x, Y(s.v[i]));
      g.lineTo(Math.max(xn, x + 1), Y(s.v[i]));
    }
  }
  function drawMemory() {
    const M = D.memory;
    memDrawn.length = 0;
    if (!M || !M.series.length) { secMemory.style.display = "none"; return; }
    secMemory.style.display = "";
    const span = Math.max(1, M.end - M.start);
    secMemory.innerHTML = "<h2>Memory over time <span class='note'>(live heap: the bytes allocated and not yet freed; resident set: the process's RSS; over " + (span / 1e9).toFixed(3) + "s" + (M.more ? "; " + M.more + " smaller processes not shown" : "") + ")</span></h2>" +
      "<div class='legend'><span style='background:" + HEAP + ";border:1px solid " + HEAP_EDGE + "'></span>Live Heap<span style='background:" + RSS + ";height:2px'></span>RSS</div>";
    const procs = [];
    for (const s of M.series) {
      let p = procs.find((q) => q.name === s.process);
      if (!p) procs.push((p = { name: s.process, heap: null, rss: null }));
      if (s.name === "Live Heap") p.heap = s; else if (s.name === "RSS") p.rss = s;
    }
    for (const p of procs) {
      const row = el("div", { class: "memory-row" });
      row.appendChild(el("div", { class: "lane-name", title: p.name }, esc(p.name)));
      const c = el("canvas", { class: "memory-chart" });
      row.appendChild(c);
      secMemory.appendChild(row);
      const w = c.clientWidth || 600, h = MEM_H, dpr = window.devicePixelRatio || 1;
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
      const g = c.getContext("2d");
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.fillStyle = "#f6f7f9";
      g.fillRect(0, 0, w, h);
      let max = 1;
      for (const s of [p.heap, p.rss]) if (s) for (const v of s.v) if (v > max) max = v;
      const X = (t) => ((t - M.start) / span) * (w - 1);
      const Y = (v) => h - 1 - (v / max) * (h - 1 - 16 - MEM_PAD); // room above for the labels
      // the live heap: a step area (each point holds until the next)
      let peak = null;
      if (p.heap && p.heap.t.length) {
        const s = p.heap;
        for (let i = 0; i < s.t.length; i++) if (!peak || s.v[i] > peak.v) peak = { t: s.t[i], v: s.v[i] };
        g.beginPath();
        g.moveTo(X(s.t[0]), h);
        steps(g, s, X, Y);
        g.lineTo(X(s.t[s.t.length - 1]) + 1, h);
        g.closePath();
        g.fillStyle = HEAP;
        g.fill();
        g.strokeStyle = HEAP_EDGE;
        g.lineWidth = 1;
        g.stroke();
      }
      if (p.rss && p.rss.t.length) {
        const s = p.rss;
        g.beginPath();
        g.moveTo(X(s.t[0]), Y(s.v[0]));
        steps(g, s, X, Y);
        g.strokeStyle = RSS;
        g.lineWidth = 1.5;
        g.stroke();
      }
      const info = { process: p.name, max: max, width: w, height: h, peak: null };
      if (peak) {
        const px = X(peak.t), py = Y(peak.v);
        g.fillStyle = "#b3261e";
        g.beginPath();
        g.arc(px, py, 3, 0, 2 * Math.PI);
        g.fill();
        const label = "peak " + fmtBytes(peak.v) + " at " + ((peak.t) / 1e9).toFixed(3) + "s";
        g.font = "12px system-ui, sans-serif";
        const tw = g.measureText(label).width;
        g.fillText(label, Math.min(Math.max(2, px - tw / 2), w - tw - 2), Math.max(12, py - 6));
        info.peak = { bytes: peak.v, time_ns: peak.t, x: px, y: py, label: label };
      }
      g.fillStyle = "#60656f";
      g.font = "11px system-ui, sans-serif";
      g.fillText(fmtBytes(max), 2, 11);
      memDrawn.push(info);
      c.addEventListener("mousemove", (ev) => {
        const r = c.getBoundingClientRect(), t = M.start + ((ev.clientX - r.left) / r.width) * span;
        const hv = p.heap ? at(p.heap, t) : null, rv = p.rss ? at(p.rss, t) : null;
        showTip(ev, p.name + "\n" + (t / 1e9).toFixed(3) + "s\nLive Heap: " + (hv === null ? "-" : fmtBytes(hv)) + "\nRSS: " + (rv === null ? "-" : fmtBytes(rv)));
      });
      c.addEventListener("mouseleave", () => { tip.style.display = "none"; });
    }
  }

  function select(f) {
    st.fn = f;
    drawFlame();
    drawHot();
    drawChanges();
    drawCallers();
    drawBottomUp();
    drawSource();
    notify("select");
  }
  metricSel.addEventListener("change", () => {
    st.metric = +metricSel.value;
    st.sortCol = null;
    applySearch();
    drawChanges();
    drawCallers();
    drawBottomUp();
    drawSource();
    drawTimeline();
    notify("metric");
  });
  let resizeTimer = 0;
  const redrawSoon = () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(() => { drawFlame(); drawTimeline(); drawMemory(); notify("resize"); }, 100); };
  window.addEventListener("resize", redrawSoon);
  // The canvases are drawn at their containers' widths and stretched to them (width: 100%):
  // a container that changes width without the window (a scroll bar that appears as the page
  // fills, a table that widens) would leave them stretched, and clicks off their frames.
  if (window.ResizeObserver) {
    const widths = new Map();
    const ro = new ResizeObserver((entries) => {
      let changed = false;
      for (const e of entries) {
        const w = Math.round(e.contentRect.width);
        if (widths.has(e.target) && widths.get(e.target) !== w) changed = true;
        widths.set(e.target, w);
      }
      if (changed) redrawSoon();
    });
    [wrap, secTimeline, secMemory].forEach((x) => ro.observe(x));
  }

  drawSummary();
  drawMemory();
  select(-1);
  drawTimeline();

  // For scripts and tests: where a function's widest frame is drawn, and the state.
  window.pcollectReport = {
    state: st,
    // For report/html/mpi.js: the page's data, its formats and timeline lanes.
    data: D,
    fmt,
    esc,
    lane,
    // For report/html/views.js (the trees and the sunburst): the tree, its values, the names,
    // the selection and the search, and hooks called when they change.
    tree: { N, depth: T.depth, parent, end, fnOf, self, total },
    ser,
    pct,
    fnName,
    fnFile,
    fnModule,
    hotVal,
    colour,
    describe,
    showTip,
    hideTip() { tip.style.display = "none"; },
    select,
    zoomTo,
    matched() { return matched; },
    on(h) { hooks.push(h); },
    frameRect(name) {
      let best = null;
      for (const q of rects) if (q[3] && fnName(fnOf[q[3]]) === name && (!best || q[2] > best.w)) best = { x: q[0], y: q[1], w: q[2], h: ROW - 1, node: q[3] };
      return best;
    },
    frameRects(name) {
      return rects.filter((q) => q[3] && fnName(fnOf[q[3]]) === name).map((q) => ({ x: q[0], y: q[1], w: q[2], h: ROW - 1, node: q[3] }));
    },
    canvasWidth() { return canvas.getBoundingClientRect().width; },
    // Per process of the memory chart: its label, the chart's scale and size (CSS pixels),
    // and the live heap's peak: bytes, time, where its marker is drawn.
    memory() { return memDrawn; },
    zoomedFunction() { return st.zoom ? fnName(fnOf[st.zoom]) : null; },
    renderedAt: performance.now(),
  };
  document.body.setAttribute("data-ready", "1");
})();
