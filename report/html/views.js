// SPDX-License-Identifier: MIT
// The HTML report's trees and sunburst (preport -format html), after report.js: VTune's
// top-down and bottom-up grids (rows that expand and collapse, the search expanding to its
// matches) and SnakeViz's sunburst (zoom on click, a depth control). Plain JavaScript, no
// library, no network.
"use strict";
(function () {
  const R = window.pcollectReport;
  if (!R) return;
  const D = R.data, st = R.state, esc = R.esc, fmt = R.fmt;
  const { N, depth, parent, end, fnOf, self, total } = R.tree;
  const MAX_ROWS = 3000; // rows a tree draws at most: the rest is a note (the page stays quick)

  function el(tag, attrs, html) {
    const e = document.createElement(tag);
    if (attrs) for (const a in attrs) e.setAttribute(a, attrs[a]);
    if (html !== undefined) e.innerHTML = html;
    return e;
  }
  const s0 = () => R.ser(st.side);
  // A node's children, heaviest total first.
  function kids(i, t) {
    const out = [];
    for (let c = i + 1; c < end[i]; c = end[c]) out.push(c);
    return out.sort((a, b) => t[b] - t[a] || a - b);
  }

  // ---- the section: a tree (top-down or bottom-up) beside the sunburst ----
  const grid = el("div", { class: "grid", id: "views" });
  const secTree = el("section", { id: "tree" });
  const secSun = el("section", { id: "sunburst" });
  grid.appendChild(secTree);
  grid.appendChild(secSun);
  const flame = document.getElementById("flame-section");
  flame.parentNode.insertBefore(grid, flame.nextSibling);

  secTree.innerHTML = "<h2>Call tree <span class='note'>(click a triangle to expand or collapse, a row to select; the heaviest path is open)</span></h2>";
  const tabs = el("div", { class: "tabs" });
  const tabTd = el("button", { type: "button", id: "tab-topdown", class: "on" }, "Top-down");
  const tabBu = el("button", { type: "button", id: "tab-bottomup" }, "Bottom-up");
  tabs.appendChild(tabTd);
  tabs.appendChild(tabBu);
  secTree.appendChild(tabs);
  const boxTd = el("div", { class: "scroll tree-box", id: "topdown-box" });
  const boxBu = el("div", { class: "scroll tree-box", id: "bottomup-box", style: "display:none" });
  secTree.appendChild(boxTd);
  secTree.appendChild(boxBu);
  const treeNote = el("p", { class: "note", id: "tree-note" });
  secTree.appendChild(treeNote);
  tabTd.addEventListener("click", () => { boxTd.style.display = ""; boxBu.style.display = "none"; tabTd.className = "on"; tabBu.className = ""; });
  // The bottom-up tree is built when its tab is first shown: the page's first paint skips it.
  let buShown = false;
  tabBu.addEventListener("click", () => {
    boxBu.style.display = ""; boxTd.style.display = "none"; tabBu.className = "on"; tabTd.className = "";
    if (!buShown) { buShown = true; openBottomUp(); drawBottomUp(); }
  });

  function head(first) {
    const m = D.metrics[st.metric].name;
    return "<thead><tr><th>" + first + "</th><th class='num'>" + esc(m) + ":Self</th><th class='num'>Self %</th><th class='num'>" + esc(m) + ":Total</th><th class='num'>Total %</th></tr></thead><tbody>";
  }
  function row(key, d, open, leaf, f, sv, tv, hit) {
    const s = s0();
    const tri = leaf ? "<span class='tw'></span>" : "<span class='tw' data-key='" + key + "'>" + (open ? "\u25be" : "\u25b8") + "</span>";
    return "<tr class='row" + (f === st.fn && f >= 0 ? " selected" : "") + (hit ? " match" : "") + "' data-key='" + key + "' data-fn='" + f + "' data-depth='" + d +
      "'><td class='name' style='padding-left:" + (4 + 14 * d) + "px' title='" + esc(R.fnName(f)) + "'>" + tri + esc(R.fnName(f)) +
      "</td><td class='num'>" + fmt(sv) + "</td><td class='num'>" + R.pct(sv, s) + "</td><td class='num'>" + fmt(tv) + "</td><td class='num'>" + R.pct(tv, s) + "</td></tr>";
  }
  function wire(box, toggle) {
    box.querySelectorAll("tr.row").forEach((tr) => tr.addEventListener("click", (ev) => {
      const k = ev.target.closest(".tw");
      if (k && k.dataset.key !== undefined) { toggle(k.dataset.key); return; }
      if (+tr.dataset.fn >= 0) R.select(+tr.dataset.fn);
    }));
  }

  // ---- top-down: the call tree's nodes; the open ones in a set ----
  const tdOpen = new Set();
  let below = null; // with a search: per node, whether it or a node under it matches
  function openHeaviest(set, i, t) {
    for (; i < N && end[i] > i + 1; i = kids(i, t)[0]) {
      if (t[i] <= 0) break;
      set.add(i);
    }
  }
  function drawTopDown() {
    const t = total[s0()], sf = self[s0()], hit = R.matched();
    let h = "<table id='topdown-tree'>" + head("Function Stack"), rows = 0;
    const walk = (i) => {
      if (rows >= MAX_ROWS) return;
      if (below && !below[i]) return;
      rows++;
      const leaf = end[i] === i + 1, open = tdOpen.has(i);
      h += row(i, depth[i], open, leaf, i ? fnOf[i] : -1, sf[i], t[i], hit && hit[i]);
      if (open) for (const c of kids(i, t)) if (t[c] > 0 || sf[c] > 0) walk(c);
    };
    walk(0);
    boxTd.innerHTML = h + "</tbody></table>";
    treeNote.textContent = rows >= MAX_ROWS ? "The first " + MAX_ROWS + " rows are drawn: collapse some to see others." : "";
    wire(boxTd, (k) => { const i = +k; if (tdOpen.has(i)) tdOpen.delete(i); else tdOpen.add(i); drawTopDown(); });
  }
  // The search: only the paths to matching nodes, each opened down to its match.
  function searchTopDown() {
    const hit = R.matched();
    below = null;
    if (!hit) return;
    below = new Uint8Array(N);
    for (let i = N - 1; i > 0; i--) if (hit[i] || below[i]) { below[i] = 1; below[parent[i]] = 1; }
    below[0] = 1;
    const seen = new Uint8Array(N); // each ancestor once, however many matches under it
    for (let i = 1; i < N; i++) if (hit[i]) for (let a = parent[i]; a >= 0 && !seen[a]; a = parent[a]) { seen[a] = 1; tdOpen.add(a); }
  }

  // ---- bottom-up: a function with self value, then the paths of callers that lead to it ----
  // A row holds its function's nodes (x) and, for each, the caller node reached at this row (a).
  // Self: the x's self; total: the total of the x with no node of the same function above.
  const buOpen = new Set();
  // Per node: no node of its function above it (one depth-first pass, a count per function).
  let outerNode = null;
  function outermost(x) {
    if (!outerNode) {
      outerNode = new Uint8Array(N);
      const on = new Map(), path = [];
      for (let i = 1; i < N; i++) {
        while (path.length && end[path[path.length - 1]] <= i) { const p = path.pop(); on.set(fnOf[p], on.get(fnOf[p]) - 1); }
        const c = on.get(fnOf[i]) || 0;
        outerNode[i] = c === 0 ? 1 : 0;
        on.set(fnOf[i], c + 1);
        path.push(i);
      }
    }
    return outerNode[x] === 1;
  }
  function buChildren(r) {
    const s = s0(), by = new Map();
    r.x.forEach((x, j) => {
      const p = parent[r.a[j]];
      if (p <= 0) return;
      let c = by.get(fnOf[p]);
      if (!c) by.set(fnOf[p], (c = { f: fnOf[p], x: [], a: [], outer: [], sv: 0, tv: 0, key: r.key + "/" + fnOf[p] }));
      c.x.push(x);
      c.a.push(p);
      c.outer.push(r.outer[j]);
      c.sv += self[s][x];
      if (r.outer[j]) c.tv += total[s][x];
    });
    return [...by.values()].filter((c) => c.sv > 0 || c.tv > 0).sort((p, q) => q.sv - p.sv || q.tv - p.tv || p.f - q.f);
  }
  let buRoots = null;
  function buTop() {
    const nodesOf = new Map();
    for (let i = 1; i < N; i++) {
      let l = nodesOf.get(fnOf[i]);
      if (!l) nodesOf.set(fnOf[i], (l = []));
      l.push(i);
    }
    const out = [];
    for (const [f, xs] of nodesOf) {
      const sv = R.hotVal("self", st.side, f);
      if (!(sv > 0) || (R.matched() && !R.matched()[xs[0]])) continue;
      out.push({ f, x: xs, a: xs, outer: xs.map(outermost), sv, tv: R.hotVal("total", st.side, f), key: String(f) });
    }
    return out.sort((p, q) => q.sv - p.sv || p.f - q.f);
  }
  function drawBottomUp() {
    if (!buRoots) buRoots = buTop();
    const hit = R.matched();
    let h = "<table id='bottomup-tree'>" + head("Function Stack (callers below)"), rows = 0;
    const walk = (r, d) => {
      if (rows >= MAX_ROWS) return;
      rows++;
      const open = buOpen.has(r.key), kidsOf = open ? buChildren(r) : null;
      const leaf = !r.a.some((a) => parent[a] > 0);
      h += row(r.key, d, open, leaf, r.f, r.sv, r.tv, hit && hit[r.x[0]]);
      if (kidsOf) for (const c of kidsOf) walk(c, d + 1);
    };
    for (const r of buRoots) walk(r, 0);
    boxBu.innerHTML = h + "</tbody></table>";
    wire(boxBu, (k) => { if (buOpen.has(k)) buOpen.delete(k); else buOpen.add(k); drawBottomUp(); });
  }
  function openBottomUp() {
    buOpen.clear();
    if (!buRoots) buRoots = buTop();
    for (let r = buRoots[0]; r; r = buChildren(r)[0]) buOpen.add(r.key);
  }

  // ---- the sunburst: the zoomed node in the middle, its callees in rings outwards ----
  // Radians: thinner arcs (and their callees) are not drawn; only arcs of DEEP_ANGLE (2.5 px at
  // the rim) add rings, as only frames of 2 px make the flame graph taller.
  const MIN_ANGLE = 0.002, DEEP_ANGLE = 0.01;
  secSun.innerHTML = "<h2>Sunburst <span class='note'>(click an arc to zoom, the middle to zoom out)</span></h2>";
  const sunCtl = el("label", { class: "depth" }, "Depth ");
  const sunDepth = el("input", { id: "sun-depth", type: "number", min: "1", value: "10", "aria-label": "sunburst depth" });
  sunCtl.appendChild(sunDepth);
  secSun.appendChild(sunCtl);
  const sunCanvas = el("canvas", { id: "sun" });
  secSun.appendChild(sunCanvas);
  let sunZoom = 0, arcs = [], sunGeo = null;
  function drawSun() {
    const t = total[s0()], z = sunZoom, zt = t[z] || 1;
    const size = Math.max(240, Math.min(560, secSun.clientWidth - 8));
    let levels = Math.max(1, Math.floor(+sunDepth.value) || 10);
    // The rings share the radius: as many as the subtree has levels drawn, at most the depth.
    let deepest = 1;
    for (let i = z + 1; i < end[z];) {
      const d = depth[i] - depth[z];
      if (t[i] / zt * 2 * Math.PI < MIN_ANGLE || d > levels) { i = end[i]; continue; }
      if (d > deepest && t[i] / zt * 2 * Math.PI >= DEEP_ANGLE) deepest = d;
      i++;
    }
    levels = deepest;
    const cx = size / 2, cy = size / 2, rIn = size * 0.1, ring = (size / 2 - 4 - rIn) / levels;
    const dpr = window.devicePixelRatio || 1;
    sunCanvas.width = Math.round(size * dpr);
    sunCanvas.height = Math.round(size * dpr);
    sunCanvas.style.width = size + "px";
    sunCanvas.style.height = size + "px";
    const g = sunCanvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, size, size);
    arcs = [];
    const start = new Float64Array(N);
    start[z] = -Math.PI / 2;
    const next = new Float64Array(N);
    next[z] = start[z];
    for (let i = z + 1; i < end[z];) {
      const d = depth[i] - depth[z], a = t[i] / zt * 2 * Math.PI, p = parent[i];
      start[i] = next[p];
      next[p] += a;
      if (a < MIN_ANGLE || d > levels || t[i] <= 0) { i = end[i]; continue; }
      next[i] = start[i];
      const r0 = rIn + (d - 1) * ring;
      g.beginPath();
      g.arc(cx, cy, r0 + ring - 0.5, start[i], start[i] + a);
      g.arc(cx, cy, r0, start[i] + a, start[i], true);
      g.closePath();
      g.fillStyle = R.colour(i);
      g.fill();
      if (st.fn >= 0 && fnOf[i] === st.fn) { g.strokeStyle = "#1d1f23"; g.lineWidth = 1.5; g.stroke(); }
      g.strokeStyle = "#fff";
      g.lineWidth = 0.5;
      g.stroke();
      arcs.push([start[i], start[i] + a, d, i]);
      i++;
    }
    g.beginPath();
    g.arc(cx, cy, rIn - 1, 0, 2 * Math.PI);
    g.fillStyle = z ? R.colour(z) : "#c9ccd2";
    g.fill();
    g.fillStyle = "#111";
    g.font = "11px system-ui, sans-serif";
    g.textAlign = "center";
    g.textBaseline = "middle";
    const label = z ? R.fnName(fnOf[z]) : "all";
    g.fillText(label.length > 16 ? label.slice(0, 15) + ".." : label, cx, cy - 6);
    g.fillText(fmt(t[z]), cx, cy + 8);
    sunGeo = { cx, cy, rIn, ring, size, levels };
  }
  function sunHit(ev) {
    const b = sunCanvas.getBoundingClientRect(), G = sunGeo;
    const x = ev.clientX - b.left - G.cx, y = ev.clientY - b.top - G.cy, r = Math.hypot(x, y);
    if (r < G.rIn) return sunZoom;
    const d = Math.floor((r - G.rIn) / G.ring) + 1;
    let a = Math.atan2(y, x);
    if (a < -Math.PI / 2) a += 2 * Math.PI;
    for (const q of arcs) if (q[2] === d && a >= q[0] && a < q[1]) return q[3];
    return -1;
  }
  sunCanvas.addEventListener("mousemove", (ev) => {
    const n = sunHit(ev);
    if (n < 0) { R.hideTip(); return; }
    R.showTip(ev, R.describe(n));
  });
  sunCanvas.addEventListener("mouseleave", () => R.hideTip());
  sunCanvas.addEventListener("click", (ev) => {
    const n = sunHit(ev);
    if (n < 0) return;
    // The middle zooms out a level; an arc zooms to it and selects its function.
    if (n === sunZoom) { sunZoom = Math.max(0, parent[n]); drawSun(); return; }
    sunZoom = n;
    R.select(fnOf[n]);
  });
  sunDepth.addEventListener("input", drawSun);

  R.on((what) => {
    if (what === "metric") { buRoots = null; if (buShown) openBottomUp(); }
    if (what === "search") { buRoots = null; searchTopDown(); }
    if (what !== "resize") { drawTopDown(); if (buShown) drawBottomUp(); }
    drawSun();
  });
  openHeaviest(tdOpen, 0, total[s0()]);
  drawTopDown();
  drawSun();

  // For scripts and tests: the rows of a tree, and the arcs of the sunburst.
  R.views = {
    // The sunburst's arcs of a function: start and end angle (radians), ring, node.
    arcs(name) { return arcs.filter((q) => R.fnName(fnOf[q[3]]) === name).map((q) => ({ a0: q[0], a1: q[1], ring: q[2], node: q[3] })); },
    rings() { return arcs.reduce((m, q) => Math.max(m, q[2]), 0); },
    sunZoom() { return sunZoom; },
    sunCentre() { const b = sunCanvas.getBoundingClientRect(); return { x: b.left + sunGeo.cx, y: b.top + sunGeo.cy, rIn: sunGeo.rIn, ring: sunGeo.ring }; },
  };
  // The first paint ends here, the trees and the sunburst drawn (bench/report-html.py).
  R.renderedAt = performance.now();
})();
