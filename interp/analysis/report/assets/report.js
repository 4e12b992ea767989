// The report page's own script: arranges the collected run data into plotly.js figures and handles clicks.
// Data: the JSON in #report-data (interp/jobs/report/collect.py documents its sections).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const main = document.getElementById("main");
  const nav = document.getElementById("nav");
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  const PALETTE = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"];

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "onclick") node.addEventListener("click", v);
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }
  const unique = (xs) => [...new Set(xs)];
  const fmt = (x, digits = 3) => (x === null || x === undefined || Number.isNaN(x) ? "" : Number(x).toFixed(digits));
  // A share (0..1) in %, with its interval [low, high] where there is one.
  const pct = (x, interval) => fmt(100 * x, 1) + (interval ? ` [${fmt(100 * interval[0], 1)}, ${fmt(100 * interval[1], 1)}]` : "");
  // Plotly error bars from a list of rows' values and their *_low / *_high fields (none where a row lacks them).
  const bars = (rows, key) => rows.every((r) => r[key + "_low"] !== undefined)
    ? { type: "data", symmetric: false, array: rows.map((r) => 100 * (r[key + "_high"] - r[key])), arrayminus: rows.map((r) => 100 * (r[key] - r[key + "_low"])) }
    : undefined;

  function section(id, title) {
    const s = el("section", { id: id }, el("h2", {}, title));
    main.append(s);
    nav.append(el("a", { href: "#" + id }, title));
    return s;
  }

  function table(head, rows) {
    return el("table", {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => (c instanceof Node ? c : el("td", {}, c)))))));
  }

  function select(label, options, onchange) {
    const s = el("select", {}, ...options.map((o) => el("option", { value: o }, o)));
    s.addEventListener("change", onchange);
    return [el("label", {}, label + " ", s), s];
  }

  // A role × layer heatmap of `records` (each with role, layer), cells valued by `value` and described by `hover`;
  // a cell for which `mark` is true shows a * after its value.
  function heatmap(div, records, value, hover, title, range, mark, axis) {
    const roles = unique(records.map((r) => r.role));
    const layers = unique(records.map((r) => r.layer)).sort((a, b) => a - b);
    const at = (role, layer) => records.find((r) => r.role === role && r.layer === layer);
    const z = roles.map((role) => layers.map((layer) => { const r = at(role, layer); return r ? value(r) : null; }));
    const text = roles.map((role) => layers.map((layer) => { const r = at(role, layer); return r ? hover(r) : ""; }));
    const shown = roles.map((role) => layers.map((layer) => { const r = at(role, layer); return r ? fmt(value(r), 2) + (mark && mark(r) ? "*" : "") : ""; }));
    Plotly.react(div, [{
      type: "heatmap", x: layers, y: roles, z: z, text: shown, hovertext: text, zmin: range[0], zmax: range[1], colorscale: "Viridis",
      texttemplate: "%{text}", hovertemplate: "%{y}, " + (axis ? "block" : "layer") + " %{x}<br>%{hovertext}<extra></extra>",
    }], {
      title: { text: title }, height: 140 + 45 * roles.length, margin: { l: 90, r: 20, t: 50, b: 50 },
      xaxis: { title: { text: axis || "layer (0 = embeddings, r = output of block r − 1)" }, dtick: 1,
        range: [layers[0] - 0.5, layers[layers.length - 1] + 0.5] },
      yaxis: { title: { text: "role" }, automargin: true },
    }, PLOT_CONFIG);
  }

  document.getElementById("run").textContent = "run folder " + data.run_dir + "; page written " + data.generated;

  // Warnings first: a model at chance on a split it is analysed on makes every figure below describe a model that has not learned.
  if ((data.warnings || []).length) {
    main.append(el("div", { id: "warnings", class: "warning" }, el("strong", {}, "Warning"), el("ul", {}, ...data.warnings.map((w) => el("li", {}, w)))));
  }

  // Over seeds: every seed's figure, the mean and its t interval over seeds (`interp train --seeds`, `interp demo --seeds`).
  (data.seeds || []).forEach((t, i) => {
    const s = section("seeds-" + i, data.seeds.length > 1 ? "Over seeds: " + t.source.split("/").slice(-2).join("/") : "Over seeds");
    const value = (r, x) => (x === null || x === undefined ? "–" : r.unit === "share" ? fmt(100 * x, 1) : fmt(x, 1));
    const withNull = t.rows.some((r) => r.null !== null && r.null !== undefined);
    s.append(el("p", { class: "note" }, `from ${t.source}; varied: ${t.varied}. Shares in %` +
      (t.rows.some((r) => r.unit !== "share") ? ", clique sizes in examples" : "") +
      "; the mean with its Student's t 95% interval over the seeds drawn (it says nothing of seeds not drawn)" +
      (withNull ? "; null: the majority label's share, the figure to beat" : "; each IIA's null is the 'larger null' row after it")));
    s.append(table(["figure", ...t.seeds.map((seed) => "seed " + seed), "mean [95% t over seeds]", ...(withNull ? ["null"] : [])],
      t.rows.map((r) => [r.figure, ...r.values.map((x) => value(r, x)),
        `${value(r, r.mean)} [${value(r, r.low)}, ${value(r, r.high)}]` + (r.seeds < t.seeds.length ? ` (${r.seeds} seeds)` : ""),
        ...(withNull ? [value(r, r.null)] : [])])));
  });

  // Behavior: accuracy of each model on each split (Table 1 of Geiger et al. 2020 for the MoNLI demo).
  if (data.behavioral.length) {
    const s = section("behavioral", "Behavior");
    for (const b of data.behavioral) {
      s.append(el("p", { class: "note" }, "from " + b.source + " (accuracy, % [95% Wilson interval over the split's examples])"));
      s.append(table(["model", "trained on", ...b.splits],
        b.rows.map((r) => [r.model, r.trained_on.join(" + "), ...b.splits.map((sp) => pct(r.accuracy[sp], (r.interval || {})[sp]))])));
      for (const n of b.effects || []) s.append(el("p", { class: "verdict" }, n));
      if ((b.paper || []).length) {
        s.append(el("p", { class: "note" }, "the paper's figures (test accuracy, %), beside the table above:"));
        s.append(table(["paper", "model", "trained on", "accuracy"], b.paper.map((r) => [r.source, r.model, r.trained_on, r.figures])));
      }
      for (const n of b.notes) s.append(el("p", { class: "note" }, n));
    }
  }

  // Inoculation: each k's lossless choice, original and challenge test accuracy against k (Richardson et al. 2020, Figure 6).
  data.inoculation.forEach((inoc, i) => {
    const s = section("inoculation-" + i, "Inoculation: " + inoc.settings.challenge);
    s.append(el("p", { class: "note" }, `from ${inoc.source}; original ${inoc.settings.original}; challenge evaluated on ${inoc.settings.challenge_eval}; ` +
      "each k keeps the setting with the best dev average (lossless inoculation); accuracies on test, % [95% Wilson interval over the test examples]"));
    const div = el("div", { id: "inoculation-plot-" + i });
    s.append(div);
    const ks = inoc.selected.map((r) => r.k);
    Plotly.newPlot(div, [
      { type: "scatter", mode: "lines+markers", name: "original (test)", x: ks, y: inoc.selected.map((r) => 100 * r.original_test), error_y: bars(inoc.selected, "original_test") },
      { type: "scatter", mode: "lines+markers", name: "challenge (test)", x: ks, y: inoc.selected.map((r) => 100 * r.challenge_test), error_y: bars(inoc.selected, "challenge_test") },
    ], { height: 360, margin: { l: 60, r: 20, t: 20, b: 50 }, xaxis: { title: { text: "k, challenge examples (0 = before)" } },
      yaxis: { title: { text: "test accuracy (%)" }, range: [0, 100] } }, PLOT_CONFIG);
    s.append(table(["k", "unit", "original dev", "challenge dev", "original test", "challenge test"],
      inoc.selected.map((r) => [r.k, r.unit, fmt(100 * r.original_dev, 1), fmt(100 * r.challenge_dev, 1),
        ...["original_test", "challenge_test"].map((key) => pct(r[key], r[key + "_low"] === undefined ? null : [r[key + "_low"], r[key + "_high"]]))])));
  });

  // Probes: role × layer heatmaps of held-out accuracy and selectivity (mean over probe seeds; the hover adds the interval).
  data.probes.forEach((p, i) => {
    const s = section("probes-" + i, data.probes.length > 1 ? "Probes: " + p.source.split("/").slice(-2).join("/") : "Probes");
    s.append(el("p", { class: "note" }, "from " + p.source + "; selectivity = probe accuracy − control-task accuracy (Hewitt & Liang 2019)"));
    // Selectivity first: a probe's accuracy alone reads high wherever the words themselves give the label away.
    const metrics = p.records.some((r) => r.selectivity_type_mean !== undefined && r.selectivity_type_mean !== null)
      ? { "selectivity (type control)": "selectivity_type", "selectivity (shuffle control)": "selectivity_shuffle", "accuracy": "task_acc" }
      : { "accuracy": "task_acc", "selectivity (type control)": "selectivity_type", "selectivity (shuffle control)": "selectivity_shuffle" };
    const controls = el("div", { class: "controls" });
    const div = el("div", { id: "probe-plot-" + i });
    const [l1, target] = select("target", unique(p.records.map((r) => r.target)), draw);
    const [l2, kind] = select("probe", unique(p.records.map((r) => r.probe)), draw);
    const [l3, metric] = select("value", Object.keys(metrics), draw);
    controls.append(l1, l2, l3);
    const unit = el("p", { class: "note interval-unit" });
    s.append(controls, div, unit);
    function draw() {
      const key = metrics[metric.value];
      const rows = p.records.filter((r) => r.target === target.value && r.probe === kind.value);
      // The 95% bootstrap interval over examples where the sweep kept it, the std over probe seeds, and the null to beat.
      const interval = (r) => (r[key + "_low"] === undefined ? "" : ` [${fmt(r[key + "_low"])}, ${fmt(r[key + "_high"])}]`);
      const over = (r) => (r[key + "_low"] === undefined ? "" : `<br>[ ]: 95% bootstrap over ${r.n_examples} examples, ${r.seeds} probe seeds`);
      const null_ = (r) => (key === "task_acc" ? (r.chance === undefined ? "" : `; chance ${fmt(r.chance)}`) : "; null 0");
      // * where the figure's 95% interval lies above its null (chance for accuracy, 0 for selectivity)
      const above = (r) => r[key + "_low"] !== undefined && r[key + "_low"] > (key === "task_acc" ? (r.chance === undefined ? Infinity : r.chance) : 0);
      const overs = unique(rows.filter((r) => r[key + "_low"] !== undefined).map((r) => `${r.n_examples} examples, ${r.seeds} probe seed${r.seeds === 1 ? "" : "s"}`));
      unit.textContent = overs.length ? `[95%] on hover and * : bootstrap over ${overs.join("; ")}; ± the std over probe seeds`
        : "no interval kept by this sweep: the cells show the mean over probe seeds";
      heatmap(div, rows, (r) => r[key + "_mean"],
        (r) => `${metric.value} ${fmt(r[key + "_mean"])}${interval(r)}${null_(r)}<br>± ${fmt(r[key + "_std"])} (std over probe seeds)${over(r)}<br>${r.location}`,
        `${kind.value} probe for ${target.value}: ${metric.value} (* its 95% interval lies above ${key === "task_acc" ? "chance" : "0"})`,
        key === "task_acc" ? [0, 1] : [-0.5, 0.5], above);
    }
    draw();
  });

  // The attribution-patching screen: every site's estimated IIA, site × layer; * where the exact interchange confirmed it.
  (data.screens || []).forEach((sc, i) => {
    const s = section("screen-" + i, "Screen: " + (sc.variable || "") + " at every site");
    const a = sc.agreement || {};
    s.append(el("p", { class: "note" }, `from ${sc.source}; estimated IIA on causal pairs by attribution patching (${sc.interval}; sampling only, ` +
      "not the linear approximation's error); * confirmed by the exact interchange (the top K and K drawn at random)" +
      (a.spearman ? `; agreement over the confirmed sites: Spearman ${a.spearman}, miss rate ${a.miss_rate}` : "")));
    if (sc.verdict) s.append(el("p", { class: "verdict" }, sc.verdict));
    const div = el("div", { id: "screen-plot-" + i });
    s.append(div);
    heatmap(div, sc.records, (r) => r.estimated_iia,
      (r) => `estimated IIA ${fmt(r.estimated_iia)} [${fmt(r.low)}, ${fmt(r.high)}], rank ${r.rank}` +
        (r.robustness !== null && r.robustness !== undefined ? `<br>GradDrop robustness ${fmt(r.robustness)}` +
          (r.cancels ? " (paths cancel: the estimate may be far too low)" : "") : "") +
        (r.confirmed ? `<br>exact IIA ${fmt(r.exact_iia)} (${r.confirmed})` : "") + `<br>${r.location}`,
      "estimated IIA (* confirmed exactly)", [0, 1], (r) => r.confirmed !== "");
  });

  // Path patching (interp path-sweep): each sender's direct effect (to the readout alone, or through one receiver)
  // beside its total effect, site × layer, with a table of the senders that move the most labels.
  (data.paths || []).forEach((ps, i) => {
    const through = ps.receiver === "readout" ? "to the readout alone" : "through " + ps.receiver;
    const s = section("paths-" + i, "Path patching: every sender " + through);
    s.append(el("p", { class: "note" }, `from ${ps.source}; share of the ${ps.pairs || ""} (base, source) pairs whose label moves off the base's own: ` +
      `direct (the sender's change ${through}, every head and MLP between held at the base run) and total (the plain interchange at the sender: every path)`));
    const controls = el("div", { class: "controls" });
    const [l1, which] = select("effect", ["direct", "total"], draw);
    controls.append(l1);
    const div = el("div", { id: "paths-plot-" + i });
    const top = el("div", { id: "paths-table-" + i });
    s.append(controls, div, top);
    const cell = (r, key) => `${fmt(r[key])} [${fmt(r[key + "_low"])}, ${fmt(r[key + "_high"])}]`;
    function draw() {
      const key = which.value;
      heatmap(div, ps.records, (r) => r[key], (r) => `direct ${cell(r, "direct")}<br>total ${cell(r, "total")}<br>${r.sender}`,
        `${key} effect: share of pairs whose label moves (* its 95% interval lies above 0)`, [0, 1], (r) => r[key + "_low"] > 0,
        "block (the sender's, 0-based)");
    }
    draw();
    const ranked = [...ps.records].sort((a, b) => b.direct - a.direct || b.total - a.total).slice(0, 10);
    top.replaceChildren(table(["sender", "direct (" + through + ") [95%]", "total (every path) [95%]"], ranked.map((r) => [r.sender, cell(r, "direct"), cell(r, "total")])),
      el("p", { class: "note interval-unit" }, "[95%]: " + ps.interval));
  });

  // Interchange interventions: IIA per variable and method, role × layer.
  data.iia.forEach((source, i) => {
    const s = section("iia-" + i, "IIA: " + source.source.split("/").slice(-2).join("/"));
    s.append(el("p", { class: "note" }, "from " + source.source + "; IIA = share of pairs whose intervened output is the causal model's counterfactual"));
    const controls = el("div", { class: "controls" });
    const div = el("div", { id: "iia-plot-" + i });
    const [l1, variable] = select("variable", unique(source.records.map((r) => r.variable)), draw);
    const [l2, method] = select("method", unique(source.records.map((r) => r.method)), draw);
    controls.append(l1, l2);
    s.append(controls, div);
    const verdicts = el("div", { id: "iia-verdicts-" + i });
    s.append(verdicts);
    // IIA on causal pairs at every location beside both nulls, each with its 95% interval, and the verdict in words.
    function draw() {
      const rows = source.records.filter((r) => r.variable === variable.value && r.method === method.value)
        .sort((a, b) => a.role.localeCompare(b.role) || a.layer - b.layer);
      const x = rows.map((r) => r.location);
      const err = (key) => ({ type: "data", symmetric: false, array: rows.map((r) => (r[key + "_high"] ?? r[key]) - r[key]),
        arrayminus: rows.map((r) => r[key] - (r[key + "_low"] ?? r[key])) });
      const traces = [{ type: "scatter", mode: "markers", name: "IIA (causal pairs)", x: x, y: rows.map((r) => r.iia), error_y: err("iia"),
        marker: { size: 10, color: "#d62728" }, text: rows.map((r) => r.detail), hovertemplate: "%{x}<br>IIA %{y:.3f}<br>%{text}<extra></extra>" }];
      for (const [key, name, colour] of [["stays", "stays the base (null)", "#1f77b4"], ["copies", "copies the source (null)", "#2ca02c"]]) {
        if (rows.some((r) => r[key] !== undefined)) {
          traces.push({ type: "scatter", mode: "markers", name: name, x: x, y: rows.map((r) => (r[key] === undefined ? null : r[key])),
            error_y: rows.every((r) => r[key + "_low"] !== undefined) ? err(key) : undefined, marker: { size: 8, symbol: "line-ew-open", color: colour, line: { width: 2 } } });
        }
      }
      Plotly.react(div, traces, { height: 380, margin: { l: 60, r: 20, t: 40, b: 140 }, title: { text: `${method.value} interchange of ${variable.value}: IIA beside its nulls (95% intervals)` },
        yaxis: { title: { text: "share of causal pairs" }, range: [0, 1] }, xaxis: { tickangle: -35, automargin: true } }, PLOT_CONFIG);
      const gap = (r) => (r.gap === undefined ? "–" : `${fmt(r.gap)} [${fmt(r.gap_low)}, ${fmt(r.gap_high)}]`);
      const nul = (r, key) => (r[key] === undefined ? "–" : fmt(r[key]) + (r[key + "_low"] === undefined ? "" : ` [${fmt(r[key + "_low"])}, ${fmt(r[key + "_high"])}]`));
      const units = unique(rows.map((r) => r.over).filter((o) => o));
      verdicts.replaceChildren(table(["location", "IIA [95%]", "stays the base [95%]", "copies the source [95%]", "IIA − larger null [95%]", "verdict"],
        rows.map((r) => [r.location, `${fmt(r.iia)} [${fmt(r.iia_low)}, ${fmt(r.iia_high)}]`, nul(r, "stays"), nul(r, "copies"), gap(r),
          el("td", { class: "verdict" }, r.verdict || "no verdict: this summary keeps no nulls")])),
        el("p", { class: "note interval-unit" }, "[95%]: " + (units.length ? units.join("; ") : "the interval of each figure's own file")));
    }
    draw();
  });

  // The intervention graph with its cliques (Appendix A.3); clicking a node or a clique shows what it holds.
  data.graphs.forEach((g, i) => {
    const s = section("graph-" + i + "-section", "Cliques: " + g.variable + " at " + g.location);
    const st = g.stats;
    s.append(el("p", { class: "note" }, `${g.title}: ${st.nodes} examples, ${st.edges} edges (${st.causal_edges} causal), density ${fmt(st.density)}; ` +
      `cliques of at least ${g.min_size} examples. Click a node for its example, a clique for its word pairs.`));
    if (g.verdict) s.append(el("p", { class: "verdict" }, "What the cliques show: " + g.verdict + "."));
    const plot = el("div", { id: "graph-" + i, class: "graph-plot" });
    const side = el("div", { class: "graph-side" });
    const detail = el("div", { class: "panel", id: "graph-" + i + "-detail" }, "Click a node or a clique.");
    s.append(el("div", { class: "graph-wrap" }, plot, side));
    side.append(detail);
    const colour = (c) => (c < 0 ? "#b0b0b0" : PALETTE[c % PALETTE.length]);
    const lines = (pick) => {
      const x = [], y = [];
      for (const [a, b] of g.edges.filter(pick)) { x.push(g.nodes[a].x, g.nodes[b].x, null); y.push(g.nodes[a].y, g.nodes[b].y, null); }
      return { x, y };
    };
    const inClique = (e) => g.nodes[e[0]].clique >= 0 && g.nodes[e[0]].clique === g.nodes[e[1]].clique;
    const background = lines((e) => !inClique(e));
    const cliqueEdges = lines(inClique);
    const baseSize = g.nodes.map((n) => (n.clique >= 0 ? 9 : 6));
    const words = (n) => Object.entries(n.attributes).filter(([k]) => k.startsWith("w_")).map(([k, v]) => `${k} ${v}`).join(", ");
    Plotly.newPlot(plot, [
      { type: "scatter", mode: "lines", name: "edge", x: background.x, y: background.y, hoverinfo: "skip", line: { color: "rgba(90,90,90,0.05)", width: 1 } },
      { type: "scatter", mode: "lines", name: "edge within a clique", x: cliqueEdges.x, y: cliqueEdges.y, hoverinfo: "skip", line: { color: "rgba(214,39,40,0.25)", width: 1 } },
      {
        type: "scatter", mode: "markers", name: "example", x: g.nodes.map((n) => n.x), y: g.nodes.map((n) => n.y),
        customdata: g.nodes.map((_, k) => k), text: g.nodes.map((n) => `${n.id}<br>${words(n)}<br>clique ${n.clique < 0 ? "none" : n.clique}`),
        hovertemplate: "%{text}<extra></extra>",
        marker: { size: baseSize, color: g.nodes.map((n) => colour(n.clique)), symbol: g.nodes.map((n) => (n.correct ? "circle" : "x")), line: { width: 0.5, color: "#333" } },
      },
    ], {
      height: 600, showlegend: false, hovermode: "closest", margin: { l: 10, r: 10, t: 10, b: 10 },
      xaxis: { visible: false }, yaxis: { visible: false, scaleanchor: "x" },
    }, PLOT_CONFIG);

    function showNode(k) {
      const n = g.nodes[k];
      const rows = [["example", n.id], ["split", n.split], ["premise", n.premise], ["hypothesis", n.hypothesis], ["words", words(n)],
        ["gold", n.gold], ["model's prediction", n.prediction + (n.correct ? " (right)" : " (wrong)")], ["clique", n.clique < 0 ? "none" : "#" + n.clique]];
      for (const [key, value] of Object.entries(n.attributes)) if (!key.startsWith("w_")) rows.push([key, value]);
      detail.replaceChildren(el("dl", {}, ...rows.flatMap(([a, b]) => [el("dt", {}, a), el("dd", {}, b)])));
      if (n.clique >= 0) detail.append(el("button", { onclick: () => showClique(n.clique) }, "show clique #" + n.clique));
    }
    function showClique(c) {
      const q = g.cliques[c];
      const counts = Object.entries(q.value_counts).map(([v, k]) => `${k} ${v}`).join(" / ");
      detail.replaceChildren(el("h3", {}, `clique #${c}: ${q.size} examples`),
        el("p", { class: "note" }, `${g.variable}: ${counts}; ${q.causal_edges} causal edges; ` + (q.log10_expected === null ? "uninterpretable: the model is at chance" : `log10 E[# such cliques] in G(n, density) ${fmt(q.log10_expected, 1)}`)),
        el("p", { class: "note" }, "word pairs grouped by the more general word (the paper's Figure 5):"),
        ...q.groups.map((gr) => el("div", { class: "group" }, el("b", {}, gr.general), gr.specific.join(", "))));
      Plotly.restyle(plot, { "marker.size": [g.nodes.map((n, k) => (n.clique === c ? 14 : baseSize[k]))] }, [2]);
      for (const row of side.querySelectorAll("tr.clique-row")) row.classList.toggle("selected", Number(row.dataset.clique) === c);
    }
    plot.on("plotly_click", (event) => {
      const point = event.points.find((p) => p.curveNumber === 2);
      if (point) showNode(point.customdata);
    });
    if (g.cliques.length) {
      const rows = g.cliques.map((q) => {
        const tr = el("tr", { class: "clique-row", "data-clique": q.number, onclick: () => showClique(q.number) },
          el("td", {}, "#" + q.number), el("td", {}, q.size), el("td", {}, Object.entries(q.value_counts).map(([v, k]) => `${k} ${v}`).join(" / ")),
          el("td", {}, q.causal_edges));
        return tr;
      });
      side.append(el("table", {}, el("thead", {}, el("tr", {}, ...["clique", "size", g.variable, "causal edges"].map((h) => el("th", {}, h)))), el("tbody", {}, ...rows)));
    } else {
      side.append(el("p", { class: "note" }, "No clique reached the minimum size."));
    }
  });

  // Settings and file hashes.
  if (data.manifests.length || data.settings.length) {
    const s = section("files", "Settings and files");
    for (const st of data.settings) {
      s.append(el("h3", {}, st.source));
      s.append(table(["setting", "value"], Object.entries(st.settings).map(([k, v]) => [k, el("td", { class: "wrap" }, typeof v === "string" ? v : JSON.stringify(v))])));
    }
    const rows = [];
    for (const m of data.manifests) for (const [name, f] of Object.entries(m.files)) rows.push([m.command, m.manifest, name, f.bytes, el("td", { class: "wrap" }, f.sha256)]);
    s.append(el("h3", {}, "outputs, from the manifests"));
    s.append(table(["command", "manifest", "file", "bytes", "SHA-256"], rows));
  }
  if (!main.children.length) main.append(el("p", {}, "This run folder holds nothing to show yet."));
})();
