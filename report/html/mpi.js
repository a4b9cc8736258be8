// SPDX-License-Identifier: MIT
// The HTML report's MPI part (preport -format html of a parallel job), after report.js: the mpi
// view's table, one function's values across ranks as bars (as Tau's ParaProf draws them),
// and a lane per rank over time. Plain JavaScript, no library, no network.
"use strict";
(function () {
  const R = window.pcollectReport;
  if (!R || !R.data.mpi) return;
  const D = R.data, M = D.mpi, st = R.state;
  const esc = R.esc, fmt = R.fmt;
  const name = (f) => D.names[D.functions[f][0]];

  const sec = document.createElement("section");
  sec.id = "mpi";
  const summary = document.getElementById("summary");
  summary.parentNode.insertBefore(sec, summary.nextSibling);
  const view = { fn: 0, kind: "total" };

  // The values of function slot i across ranks, in the metric's unit, and their statistics.
  function acrossRanks(i, k, kind) {
    const sc = D.metrics[k].scale, v = M[kind][i][k].map((x) => x * sc), n = v.length;
    let lo = 0, hi = 0, sum = 0;
    v.forEach((x, j) => { sum += x; if (x < v[lo]) lo = j; if (x > v[hi]) hi = j; });
    const mean = n ? sum / n : 0;
    const sd = n ? Math.sqrt(v.reduce((a, x) => a + (x - mean) * (x - mean), 0) / n) : 0;
    const idle = M.ranks.filter((_, j) => v[j] === 0);
    return { values: v, min: v[lo], minRank: M.ranks[lo], max: v[hi], maxRank: M.ranks[hi], mean, sd, idle };
  }

  function drawTable() {
    if (!M.table) return "<h2>MPI calls</h2><p class='note'>The job recorded no MPI calls (pcollect -trace-mpi records them).</p>";
    let h = "<h2>MPI calls <span class='note'>(preport -view mpi: per MPI function, its time over the ranks that called it)</span></h2><div class='scroll'><table id='mpi-table'><thead><tr>";
    const text = M.table.cols.map((c) => c === "Function" || c === "Kind");
    M.table.cols.forEach((c, j) => { h += "<th" + (text[j] ? "" : " class='num'") + ">" + esc(c) + "</th>"; });
    h += "</tr></thead><tbody>";
    for (const r of M.table.rows) h += "<tr>" + r.map((c, j) => "<td" + (text[j] ? "" : " class='num'") + ">" + esc(c) + "</td>").join("") + "</tr>";
    return h + "</tbody></table></div>";
  }

  function drawRanks() {
    const box = document.getElementById("rank-view"), k = st.metric;
    if (!M.functions.length) { box.innerHTML = "<p class='note'>No function has a value.</p>"; return; }
    const s = acrossRanks(view.fn, k, view.kind), F = M.functions[view.fn];
    let h = "<p id='rank-stats'><b>" + esc(name(F)) + "</b>, " + esc(D.metrics[k].name) + " " + view.kind + " per rank: min " + fmt(s.min, k) + " (rank " + s.minRank + "), max " + fmt(s.max, k) + " (rank " + s.maxRank + "), mean " + fmt(s.mean, k) + ", standard deviation " + fmt(s.sd, k) + ", imbalance " + (s.max > 0 ? (100 * (s.max - s.mean) / s.max).toFixed(1) : "0.0") + "% ((max - mean) / max); " + (s.idle.length ? "<span class='idle-note'>no work on rank" + (s.idle.length > 1 ? "s " : " ") + s.idle.join(", ") + "</span>" : "every rank worked") + (M.more_ranks ? "; " + M.more_ranks + " higher ranks not shown" : "") + "</p><div class='scroll'><table id='rank-bars'><tbody>";
    s.values.forEach((v, j) => {
      const w = s.max > 0 ? (100 * v / s.max).toFixed(2) : 0;
      h += "<tr class='rank-bar" + (v ? "" : " idle") + "' data-rank='" + M.ranks[j] + "' data-value='" + v + "'><td class='num'>rank " + M.ranks[j] + "</td><td class='bar'><div style='width:" + w + "%'></div></td><td class='num'>" + (v ? fmt(v, k) : "no work") + "</td></tr>";
    });
    box.innerHTML = h + "</tbody></table></div>";
  }

  function drawLanes() {
    const box = document.getElementById("rank-timeline"), tl = D.timeline, k = st.metric;
    if (!M.lanes || !tl) { box.innerHTML = "<p class='note'>The result has no timeline.</p>"; return; }
    let max = 0;
    for (const l of M.lanes) for (const v of l[k]) if (v > max) max = v;
    box.innerHTML = "";
    M.lanes.forEach((l, j) => R.lane(box, "rank " + M.ranks[j], l[k], max, k, "42,98,201", "rank-lane", 600));
    if (M.more_lanes) box.appendChild(document.createTextNode(M.more_lanes + " higher ranks not drawn."));
  }

  let h = drawTable() + "<h2>Per rank <span class='note'>(a function's time on each rank)</span></h2><p><label>Function <select id='rank-function'>";
  M.functions.forEach((f, i) => { h += "<option value='" + i + "'>" + esc(name(f)) + "</option>"; });
  h += "</select></label> <label><select id='rank-kind'><option value='total'>Total</option><option value='self'>Self</option></select></label></p><div id='rank-view'></div><h2>Timeline by rank <span class='note'>(the threads of each rank summed)</span></h2><div id='rank-timeline'></div>";
  sec.innerHTML = h;
  document.getElementById("rank-function").addEventListener("change", (ev) => { view.fn = +ev.target.value; drawRanks(); });
  document.getElementById("rank-kind").addEventListener("change", (ev) => { view.kind = ev.target.value; drawRanks(); });
  document.getElementById("metric").addEventListener("change", () => { drawRanks(); drawLanes(); });
  drawRanks();
  drawLanes();
  // For scripts and tests: one function's values across ranks.
  R.ranks = (f, kind) => {
    const i = M.functions.findIndex((x) => name(x) === f);
    return i < 0 ? null : acrossRanks(i, st.metric, kind || "total");
  };
})();
