/*
 * report.js - draws a gprof-dl report from its JSON document only
 * (formats/html/REPORT-FORMAT.md): the sections, their charts (Chart.js
 * 3.9, inlined before this script) and their sortable tables.
 *
 * Rules kept throughout:
 *  - every figure shown is a value of the document, in an element
 *    class="gp-num" whose data-src is its JSON pointer, data-value its
 *    String(value), and text gpFormat(kind, value); nothing is computed
 *    here but the order of rows and what Chart.js stacks;
 *  - names from the program are data: they reach the page through
 *    textContent and createTextNode only, never as markup or in a URL;
 *  - a failure is caught, pushed to gprofDlReport.errors and said on the
 *    console, and the rest of the page is still drawn.
 *
 * Plain ES2017 in one function, no modules: the page opens from disk.
 */
(function () {
	'use strict';

	var R = (window.gprofDlReport = {data: null, charts: {}, errors: []});
	var TOP_CHART = 15; /* bars per "heaviest" chart */
	/* Okabe-Ito: told apart with any colour vision, and in grey print */
	var PALETTE = ['#0072B2', '#E69F00', '#009E73', '#D55E00', '#56B4E9', '#CC79A7', '#F0E442', '#000000'];
	var SECTIONS = [
		['advice', 'Advice'],
		['overview', 'Overview'],
		['steps', 'Steps'],
		['operators', 'Operators'],
		['kernels', 'Kernels'],
		['memory', 'Memory'],
		['devices', 'Devices'],
		['distributed', 'Distributed'],
		['diff', 'Diff']
	];

	function fail(where, e) {
		var msg = where + ': ' + (e && e.stack ? e.stack : String(e));
		R.errors.push(msg);
		console.error('gprof-dl report: ' + msg);
	}

	/* ---- numbers ----------------------------------------------------------- */

	function fixed(v, d) {
		return v.toLocaleString('en-US', {minimumFractionDigits: d, maximumFractionDigits: d});
	}

	/* C's "%.2f" of m >= 0: the exact value rounded half to even (glibc),
	 * where toFixed(2) rounds a tie up. toFixed(60) is exact for a double
	 * under 1024 (at most 60 binary, so decimal, places). */
	function printf2(m) {
		var s = m.toFixed(60), dot = s.indexOf('.');
		var n = Number(s.slice(0, dot) + s.slice(dot + 1, dot + 3)), rest = s.slice(dot + 3);
		if (rest[0] > '5' || (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || n % 2)))
			n++;
		return (n / 100).toFixed(2);
	}

	/* The text of a value of a kind, as REPORT-FORMAT.md specifies it (bytes
	 * as table_bytes_text() in C). "number" columns are kind "real". */
	function gpFormat(kind, v) {
		switch (kind) {
		case 'time': {
			/* a nonzero time under 0.001, which 3 decimals would show as 0
			 * or with one digit: its first two significant digits (at most
			 * 9 decimals), as table_time_decimals() in C */
			var m = Math.abs(v), d = 3;
			if (m > 0 && m < 0.001 && isFinite(m))
				d = Math.min(9, 1 - Math.floor(Math.log10(m)));
			return fixed(v, d);
		}
		case 'count':
			return v.toLocaleString('en-US');
		case 'percent':
			return fixed(v, 2) + ' %';
		case 'bytes': {
			var mag = Math.abs(v), units = ['kB', 'MB', 'GB', 'TB'], u = 0;
			if (mag < 1000)
				return String(v) + ' B';
			mag /= 1000;
			while (mag >= 1000 && u + 1 < units.length) {
				mag /= 1000;
				u++;
			}
			return (v < 0 ? '-' : '') + printf2(mag) + ' ' + units[u];
		}
		default:
			return fixed(v, 2);
		}
	}
	window.gpFormat = gpFormat;

	function numKind(kind) {
		return kind === 'time' || kind === 'count' || kind === 'percent' || kind === 'bytes' ? kind : 'real';
	}

	/* ---- the document ------------------------------------------------------- */

	/* A JSON pointer (RFC 6901) from a base pointer and tokens. */
	function P(base) {
		var s = base;
		for (var i = 1; i < arguments.length; i++)
			s += '/' + String(arguments[i]).replace(/~/g, '~0').replace(/\//g, '~1');
		return s;
	}

	function at(ptr) {
		var v = R.data;
		var toks = ptr.split('/').slice(1);
		for (var i = 0; i < toks.length && v != null; i++)
			v = v[toks[i].replace(/~1/g, '/').replace(/~0/g, '~')];
		return v;
	}

	/* The rows of a part in tree pre-order: [{row, ptr, depth, index}]. */
	function flatten(partPtr, rows) {
		var out = [];
		(function walk(list, base, depth) {
			for (var i = 0; i < (list || []).length; i++) {
				var p = P(base, i);
				out.push({row: list[i], ptr: p, depth: depth, index: out.length});
				walk(list[i].children, P(p, 'children'), depth + 1);
			}
		})(rows, P(partPtr, 'rows'), 0);
		return out;
	}

	function table(key) {
		var t = R.data.summary.tables[key];
		return t ? {t: t, ptr: P('/summary/tables', key)} : null;
	}

	function hasRows(t) {
		return t && t.sections && t.sections.some(function (s) {
			return s.rows && s.rows.length;
		});
	}

	function colOf(t, part, key) {
		var cols = part.columns || t.columns;
		for (var i = 0; i < cols.length; i++)
			if (cols[i].key === key)
				return cols[i];
		return null;
	}

	/* ---- the DOM ------------------------------------------------------------ */

	/* Text as shown: each control character (C0, DEL, C1) and each bidi
	 * formatting character written as "\u{202E}", so that a name can
	 * neither break a line nor turn the text around it right to left
	 * ("evil\u{202E}gnp.exe" stays as it is, not "evilexe.png"), as
	 * textsafe.h's \xNN does on a terminal. Every text the page shows goes
	 * through it (el, put, chart labels). */
	var HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
	function vis(s) {
		return String(s).replace(HIDDEN, function (c) {
			var h = c.charCodeAt(0).toString(16).toUpperCase();
			return '\\u{' + '0000'.slice(h.length) + h + '}';
		});
	}

	function el(tag, attrs, text) {
		var e = document.createElement(tag);
		for (var k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text != null)
			e.textContent = vis(text);
		return e;
	}

	/* <span class="gp-num"> of the value at ptr, or "-" when it has none. */
	function num(kind, ptr, tag) {
		var v = at(ptr);
		if (typeof v !== 'number')
			return el(tag || 'span', {class: 'gp-null'}, '-');
		kind = numKind(kind);
		return el(tag || 'span', {class: 'gp-num', 'data-src': ptr, 'data-kind': kind, 'data-value': String(v)},
			gpFormat(kind, v));
	}

	/* Text and nodes, in order, into parent. */
	function put(parent) {
		for (var i = 1; i < arguments.length; i++) {
			var x = arguments[i];
			parent.appendChild(typeof x === 'string' ? document.createTextNode(vis(x)) : x);
		}
		return parent;
	}

	function empty(sec, why) {
		sec.setAttribute('data-state', 'empty');
		sec.appendChild(el('p', {class: 'gp-empty'}, why));
	}

	function notes(parent, t) {
		if (!t.notes || !t.notes.length)
			return;
		var d = el('details', {class: 'gp-notes'});
		d.appendChild(el('summary', null, 'Notes: ' + t.title));
		var pre = el('pre', null, t.notes.join('\n'));
		d.appendChild(pre);
		parent.appendChild(d);
	}

	/* ---- charts ------------------------------------------------------------- */

	var rendered = {
		id: 'gpRendered',
		afterRender: function (chart) {
			chart.canvas.parentNode.setAttribute('data-rendered', '1');
		}
	};

	function color(i) {
		return PALETTE[i % PALETTE.length];
	}

	/* A dataset of the values at ptrs (each point's JSON pointer kept in
	 * gpPointers, its x's in gpXPointers for charts over x), as kind. */
	function dataset(label, kind, ptrs, i, xptrs) {
		var d = {
			label: label,
			gpKind: numKind(kind),
			gpPointers: ptrs,
			data: ptrs.map(function (p, j) {
				var y = at(p);
				return xptrs ? {x: at(xptrs[j]), y: y} : y;
			}),
			backgroundColor: color(i),
			borderColor: color(i),
			maxBarThickness: 28
		};
		if (xptrs)
			d.gpXPointers = xptrs;
		return d;
	}

	function short(name) {
		name = String(name);
		return name.length > 60 ? name.slice(0, 57) + '...' : name;
	}

	/* Ticks of an axis of bytes from 0 (or lo) to hi: a unit from the
	 * largest magnitude (B, kB, MB, GB, TB: 10^3 apart, gpFormat's), and a
	 * step of 1, 2 or 5 x 10^n of that unit giving at most max (default 8)
	 * intervals, so that the labels are round: "0 B, 500 kB, 1 MB, 1.5 MB"
	 * and never "488.28 kB". {unit, scale, step, values, labels}. */
	function gpBytesTicks(lo, hi, max) {
		max = max || 8;
		lo = Math.min(0, lo || 0);
		hi = Math.max(0, hi || 0);
		var units = ['B', 'kB', 'MB', 'GB', 'TB'], u = 0, scale = 1, top = Math.max(-lo, hi);
		while (top >= 1000 * scale && u + 1 < units.length) {
			scale *= 1000;
			u++;
		}
		var span = (hi - lo) / scale || 1, step = 0;
		for (var e = Math.floor(Math.log10(span / max)) - 1; !step; e++)
			[1, 2, 5].some(function (m) {
				var s = m * Math.pow(10, e);
				if (span / s <= max + 1e-9) {
					step = s;
					return true;
				}
				return false;
			});
		if (u === 0 && step < 1)
			step = 1; /* no fraction of a byte */
		var dec = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
		var out = {unit: units[u], scale: scale, step: step * scale, values: [], labels: []};
		var first = Math.floor(lo / scale / step + 1e-9), last = Math.ceil(hi / scale / step - 1e-9);
		for (var k = first; k <= last; k++) {
			var v = Number((k * step).toFixed(dec));
			out.values.push(v * scale);
			out.labels.push((v < 0 ? '-' : '') + Math.abs(v).toFixed(dec) + ' ' + units[u]);
		}
		return out;
	}
	window.gpBytesTicks = gpBytesTicks;

	function axis(title, kind, extra) {
		var a = {title: {display: !!title, text: title}, ticks: {}};
		if (kind === 'bytes') {
			/* round ticks in one unit (gpBytesTicks), set after Chart.js
			 * has found the data's range */
			var tk = null;
			a.afterBuildTicks = function (scale) {
				tk = gpBytesTicks(scale.min, scale.max);
				scale.ticks = tk.values.map(function (v) { return {value: v}; });
				scale.min = tk.values[0];
				scale.max = tk.values[tk.values.length - 1];
				scale.gpTicks = tk;
			};
			a.ticks.callback = function (v) {
				var i = tk ? tk.values.indexOf(v) : -1;
				return i >= 0 ? tk.labels[i] : gpFormat('bytes', v);
			};
		}
		else if (kind === 'count')
			a.ticks.precision = 0;
		for (var k in extra || {})
			a[k] = extra[k];
		return a;
	}

	/* <figure class="gp-chart" id="chart-NAME" data-src=src>, its canvas
	 * drawn by Chart.js, and its caption (text and gp-num nodes). */
	function chart(parent, name, src, config, caption, aspect) {
		aspect = aspect || (config.type === 'line' ? 3 : 2.4);
		var fig = el('figure', {class: 'gp-chart', id: 'chart-' + name, 'data-src': src});
		var canvas = el('canvas', {role: 'img'});
		var cap = put.apply(null, [el('figcaption')].concat(caption));
		canvas.setAttribute('aria-label', cap.textContent);
		fig.appendChild(canvas);
		fig.appendChild(cap);
		parent.appendChild(fig);
		config.data.labels = (config.data.labels || []).map(vis);
		config.data.datasets.forEach(function (d) { d.label = vis(d.label); });
		var o = config.options || (config.options = {});
		o.animation = false;
		o.responsive = true;
		o.maintainAspectRatio = true;
		o.aspectRatio = aspect;
		o.plugins = o.plugins || {};
		o.plugins.legend = o.plugins.legend || {display: config.data.datasets.length > 1};
		o.plugins.tooltip = {
			callbacks: {
				label: function (c) {
					var y = c.dataset.data[c.dataIndex];
					y = y && typeof y === 'object' ? y[o.indexAxis === 'y' ? 'x' : 'y'] : y;
					return c.dataset.label + ': ' + (typeof y === 'number' ? gpFormat(c.dataset.gpKind, y) : '-');
				}
			}
		};
		config.plugins = [rendered];
		try {
			R.charts[name] = new Chart(canvas, config);
		} catch (e) {
			fail('chart ' + name, e);
		}
		return fig;
	}

	/* Horizontal bars of the heaviest rows of a part by key (at most
	 * TOP_CHART, those with a value above 0), each key in keys a dataset. */
	function barsTop(parent, name, tp, part, pi, keys, sortKey, caption) {
		var partPtr = P(tp.ptr, 'sections', pi);
		var rows = flatten(partPtr, part.rows).filter(function (r) {
			return r.depth === 0 && typeof r.row[sortKey] === 'number' && r.row[sortKey] > 0;
		});
		rows.sort(function (a, b) {
			return b.row[sortKey] - a.row[sortKey] || a.index - b.index;
		});
		rows = rows.slice(0, TOP_CHART);
		if (!rows.length)
			return null;
		var nameKey = firstText(tp.t, part);
		var ds = keys.map(function (k, i) {
			var c = colOf(tp.t, part, k);
			return dataset(c.name, c.kind, rows.map(function (r) {
				return P(r.ptr, k);
			}), i);
		});
		var kind = colOf(tp.t, part, keys[0]).kind;
		chart(parent, name, partPtr, {
			type: 'bar',
			data: {labels: rows.map(function (r) { return short(r.row[nameKey]); }), datasets: ds},
			options: {indexAxis: 'y', scales: {x: axis(unitTitle(kind), kind), y: {ticks: {autoSkip: false}}}}
		}, caption(rows), barAspect(rows.length));
		return rows;
	}

	/* Horizontal bars about 24 px thick in a chart about 1000 px wide. */
	function barAspect(n) {
		return Math.min(5, Math.max(1.1, 1000 / (n * 24 + 90)));
	}

	function unitTitle(kind) {
		return kind === 'time' ? 'time (' + R.data.summary.time_unit + ')' : kind === 'bytes' ? 'bytes' :
			kind === 'percent' ? '%' : '';
	}

	/* A line per part over x (a time since the start), as kind. */
	function lines(parent, name, tp, parts, xKey, yKey, caption) {
		var ds = parts.map(function (pi, i) {
			var part = tp.t.sections[pi], partPtr = P(tp.ptr, 'sections', pi);
			var rows = flatten(partPtr, part.rows);
			var d = dataset(part.title || part.label || 'part ' + pi, colOf(tp.t, part, yKey).kind,
				rows.map(function (r) { return P(r.ptr, yKey); }), i,
				rows.map(function (r) { return P(r.ptr, xKey); }));
			d.gpSrc = partPtr;
			d.pointRadius = rows.length > 60 ? 0 : 2;
			d.fill = false;
			/* a bin's value holds from its start to the next bin's */
			d.stepped = xKey === 'start' ? 'before' : false;
			return d;
		});
		var part0 = tp.t.sections[parts[0]];
		var xk = colOf(tp.t, part0, xKey).kind, yk = colOf(tp.t, part0, yKey).kind;
		return chart(parent, name, parts.length === 1 ? P(tp.ptr, 'sections', parts[0]) : tp.ptr, {
			type: 'line',
			data: {datasets: ds},
			options: {
				parsing: false,
				scales: {
					x: axis(xKey === 'start' ? 'since the start (' + R.data.summary.time_unit + ')' : xKey, xk,
						{type: 'linear'}),
					y: axis(unitTitle(yk), yk, {beginAtZero: true})
				}
			}
		}, caption);
	}

	/* ---- tables -------------------------------------------------------------- */

	function firstText(t, part) {
		var cols = part.columns || t.columns;
		for (var i = 0; i < cols.length; i++)
			if (cols[i].kind === 'text')
				return cols[i].key;
		return null;
	}

	/* The columns of a part that the page shows: every one but the GPU
	 * figures (keys "gpu_...") that are 0 or null in every row, as on a
	 * CPU-only run, where they would push Self off the screen (the text
	 * summary leaves them out alike). rows: the part's rows, nested too. */
	function gpShownColumns(cols, rows) {
		var flat = [];
		(function walk(list) {
			(list || []).forEach(function (r) {
				flat.push(r);
				walk(r.children);
			});
		})(rows);
		return cols.filter(function (c) {
			if (c.kind === 'text' || String(c.key).indexOf('gpu_') !== 0)
				return true;
			return flat.some(function (r) { return typeof r[c.key] === 'number' && r[c.key] !== 0; });
		});
	}
	window.gpShownColumns = gpShownColumns;

	/* <table class="gp-table"> of one part: every column (but the all-zero
	 * GPU ones, gpShownColumns(), named in data-hidden), every row the
	 * document holds (nested rows indented, sorted among their siblings). */
	function gpTable(parent, tp, pi, heading) {
		var t = tp.t, part = t.sections[pi], partPtr = P(tp.ptr, 'sections', pi);
		var all = part.columns || t.columns, nameKey = firstText(t, part);
		var cols = gpShownColumns(all, part.rows);
		var wrap = el('div', {class: 'gp-table-wrap'});
		if (heading)
			wrap.appendChild(el('h3', null, heading));
		var tab = el('table', {class: 'gp-table', 'data-src': partPtr});
		if (cols.length < all.length)
			tab.setAttribute('data-hidden', all.filter(function (c) { return cols.indexOf(c) < 0; })
				.map(function (c) { return c.key; }).join(' '));
		var head = el('tr'), body = el('tbody');
		var flat = flatten(partPtr, part.rows);
		var trs = flat.map(function (r) {
			var tr = el('tr', {'data-row': String(r.index)});
			cols.forEach(function (c) {
				if (c.kind === 'text') {
					var td = el('td', {class: c.key === nameKey ? 'gp-name' : 'gp-text'},
						r.row[c.key] == null ? '' : String(r.row[c.key]));
					if (c.key === nameKey && r.depth)
						td.style.paddingLeft = (0.4 + r.depth * 1.2) + 'em';
					tr.appendChild(td);
				} else {
					tr.appendChild(num(c.kind, P(r.ptr, c.key), 'td'));
				}
			});
			return tr;
		});
		/* the tree: each row's children, to sort siblings together */
		var kids = [], stack = [], roots = [];
		flat.forEach(function (r) {
			kids[r.index] = [];
			stack.length = r.depth;
			(r.depth ? kids[stack[r.depth - 1]] : roots).push(r.index);
			stack[r.depth] = r.index;
		});
		function order(key, dir, isText) {
			var out = [];
			(function walk(list) {
				var l = list.slice();
				if (key)
					l.sort(function (a, b) {
						var x = flat[a].row[key], y = flat[b].row[key];
						if (x == null || y == null)
							return (x == null) - (y == null) || a - b;
						var c = isText ? String(x).localeCompare(String(y)) : x - y;
						return c * dir || a - b;
					});
				l.forEach(function (i) {
					out.push(i);
					walk(kids[i]);
				});
			})(roots);
			out.forEach(function (i) {
				body.appendChild(trs[i]);
			});
		}
		cols.forEach(function (c) {
			var th = el('th', {scope: 'col', 'aria-sort': 'none', 'data-key': c.key, tabindex: '0',
				class: c.kind === 'text' ? 'gp-th-text' : 'gp-th-num'}, c.name);
			function sort() {
				var dir = th.getAttribute('aria-sort') === 'descending' ? 1 : -1;
				if (th.getAttribute('aria-sort') === 'none' && c.kind === 'text')
					dir = 1; /* names first A to Z, numbers largest first */
				Array.prototype.forEach.call(head.children, function (h) {
					h.setAttribute('aria-sort', 'none');
				});
				th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
				order(c.key, dir, c.kind === 'text');
			}
			th.addEventListener('click', sort);
			th.addEventListener('keydown', function (e) {
				if (e.key === 'Enter' || e.key === ' ') {
					e.preventDefault();
					sort();
				}
			});
			head.appendChild(th);
		});
		order(null, 1, false);
		tab.appendChild(el('thead')).appendChild(head);
		tab.appendChild(body);
		if (part.title || part.label)
			tab.appendChild(el('caption', null, part.title || part.label));
		wrap.appendChild(tab);
		parent.appendChild(wrap);
		return tab;
	}

	/* Every part of a table with rows, under its title, and its notes. */
	function allTables(parent, tp) {
		var first = true;
		tp.t.sections.forEach(function (part, pi) {
			if (part.rows && part.rows.length) {
				gpTable(parent, tp, pi, first ? tp.t.title : null);
				first = false;
			}
		});
		notes(parent, tp.t);
	}

	/* ---- the sections ---------------------------------------------------------- */

	function fact(dl, label) {
		dl.appendChild(el('dt', null, label));
		return dl.appendChild(put.apply(null, [el('dd')].concat([].slice.call(arguments, 2))));
	}

	function overview(sec) {
		var S = R.data.summary, dl = el('dl', {class: 'gp-facts'});
		var tr = fact(dl, S.traces.length === 1 ? 'Trace' : 'Traces');
		S.traces.forEach(function (f, i) {
			var li = put(el('div', {class: 'gp-trace'}), el('span', {class: 'gp-path'}, f.path), ': ',
				num('count', P('/summary/traces', i, 'events')), ' events');
			if (f.rank >= 0)
				put(li, ', rank ', num('count', P('/summary/traces', i, 'rank')));
			/* read up to its damage: said, as summary says it */
			if (f.damage)
				put(li, el('span', {class: 'gp-damage'}, ', damaged at offset '),
					num('count', P('/summary/traces', i, 'damage', 'offset')),
					el('span', {class: 'gp-damage'}, ': ' + f.damage.reason + '; read up to there'));
			tr.appendChild(li);
		});
		if (S.job)
			fact(dl, 'Job', num('count', '/summary/job/ranks'), ' ranks on ', num('count', '/summary/job/hosts'),
				' host(s)');
		fact(dl, 'Events', num('count', '/summary/events/total'));
		fact(dl, 'Dropped', num('count', '/summary/events/dropped'));
		fact(dl, 'Window', num('time', '/summary/window/total'), ' ' + S.time_unit + ' (' + S.window.source + ')');
		fact(dl, 'Steps', num('count', '/summary/window/steps'));
		sec.appendChild(dl);
		var ov = table('overview');
		if (hasRows(ov.t)) {
			ov.t.sections.forEach(function (part, pi) {
				if (!part.rows || !part.rows.length)
					return;
				var partPtr = P(ov.ptr, 'sections', pi);
				var flat = flatten(partPtr, part.rows);
				var tcol = (part.columns || ov.t.columns).filter(function (c) { return c.kind === 'time'; })[0];
				if (!tcol)
					return;
				var tkey = tcol.key;
				var heavy = flat.filter(function (r) { return r.depth > 0; }).sort(function (a, b) {
					return b.row[tkey] - a.row[tkey];
				})[0];
				var cap = ['Time by event type' + (part.label ? ' (' + part.label + ')' : '') +
					', overlaps merged: ' + flat[0].row.event_type + ' ', num('time', P(flat[0].ptr, tkey)), ' ' +
					S.time_unit];
				if (heavy)
					cap.push('; the heaviest inside it, ' + heavy.row.event_type + ', ', num('time', P(heavy.ptr, tkey)),
						' ' + S.time_unit + ' (', num('percent', P(heavy.ptr, 'ratio')), ').');
				chart(sec, 'overview' + (pi ? '-' + pi : ''), partPtr, {
					type: 'bar',
					data: {
						labels: flat.map(function (r) { return '  '.repeat(r.depth) + r.row.event_type; }),
						datasets: [dataset(colOf(ov.t, part, tkey).name, 'time', flat.map(function (r) {
							return P(r.ptr, tkey);
						}), 0)]
					},
					options: {indexAxis: 'y', scales: {x: axis(unitTitle('time'), 'time')}}
				}, cap, barAspect(flat.length));
			});
			allTables(sec, ov);
		}
		var dev = table('device');
		if (dev && hasRows(dev.t))
			allTables(sec, dev);
	}

	function perfCaption() {
		var perf = table('perf');
		if (!perf || !hasRows(perf.t))
			return [];
		var out = ['Perf Summary: '], p0 = perf.t.sections[0];
		p0.rows.forEach(function (r, i) {
			out.push((i ? ', ' : '') + r.name + ' avg ', num('time', P(perf.ptr, 'sections', 0, 'rows', i, 'avg')),
				' ' + R.data.summary.time_unit);
		});
		var p1 = perf.t.sections[1];
		if (p1 && p1.rows.length)
			out.push(', ' + p1.rows[0].name + ' avg ', num('real', P(perf.ptr, 'sections', 1, 'rows', 0, 'avg')),
				p1.label ? ' (' + p1.label + ')' : '');
		if (p0.facts && p0.facts.counted != null)
			out.push('; ', num('count', P(perf.ptr, 'sections', 0, 'facts', 'counted')), ' steps counted of ',
				num('count', P(perf.ptr, 'sections', 0, 'facts', 'steps')), '.');
		return out;
	}

	var PHASES = ['dataloader', 'forward', 'backward', 'optimization', 'others'];

	function steps(sec) {
		var st = table('steps');
		if (!st || !hasRows(st.t))
			return empty(sec, (st && st.t.empty) || 'No training steps (ProfileStep ranges) recorded.');
		var parts = [];
		st.t.sections.forEach(function (p, i) {
			if (p.rows && p.rows.length)
				parts.push(i);
		});
		var u = R.data.summary.time_unit;
		lines(sec, 'step-time', st, parts, 'step', 'duration',
			['Step time per step, one line per ' + (parts.length > 1 ? 'trace or rank' : 'trace') + ' (' + u +
				'). '].concat(perfCaption()));
		var box = el('div', {class: 'gp-steps-part'});
		var sel = null;
		if (parts.length > 1) {
			var lab = el('label', {class: 'gp-select'}, 'Model phases of ');
			sel = el('select', {id: 'gp-steps-rank'});
			parts.forEach(function (pi) {
				var p = st.t.sections[pi];
				sel.appendChild(el('option', {value: String(pi)}, p.label || p.title || 'part ' + pi));
			});
			lab.appendChild(sel);
			sec.appendChild(lab);
		}
		sec.appendChild(box);
		function draw(pi) {
			box.textContent = '';
			if (R.charts['step-phases']) {
				R.charts['step-phases'].destroy();
				delete R.charts['step-phases'];
			}
			var part = st.t.sections[pi], partPtr = P(st.ptr, 'sections', pi);
			var flat = flatten(partPtr, part.rows);
			var keys = PHASES.filter(function (k) { return colOf(st.t, part, k); });
			var cap = ['Model phases of each step, stacked (' + u + '): ' + (part.label || part.title || '') + ', '];
			if (part.facts) {
				cap.push(num('count', P(partPtr, 'facts', 'steps')), ' steps, ',
					num('count', P(partPtr, 'facts', 'per_row')), ' per bar, ',
					num('count', P(partPtr, 'facts', 'skipped')), ' skipped as warm-up.');
			}
			chart(box, 'step-phases', partPtr, {
				type: 'bar',
				data: {
					labels: flat.map(function (r) { return r.row.name; }),
					datasets: keys.map(function (k, i) {
						return dataset(colOf(st.t, part, k).name, 'time', flat.map(function (r) {
							return P(r.ptr, k);
						}), i);
					})
				},
				options: {scales: {x: {stacked: true}, y: axis(unitTitle('time'), 'time', {stacked: true})}}
			}, cap);
			gpTable(box, st, pi, st.t.title);
		}
		if (sel)
			sel.addEventListener('change', function () {
				try {
					draw(Number(sel.value));
				} catch (e) {
					fail('steps', e);
				}
			});
		draw(parts[0]);
		notes(sec, st.t);
	}

	/* A job's report: a <select id="gp-ID-rank"> of "all ranks" and each
	 * rank of the document's "ranks" (their own summaries), above box; draw(tp
	 * or null, box) draws the section's content for the summary's table key
	 * (tp null: the job's, tables of all ranks). */
	function rankSelect(sec, id, key, draw) {
		var ranks = R.data.ranks || [], box = el('div', {class: 'gp-rank-part'});
		if (ranks.length > 1) {
			var lab = el('label', {class: 'gp-select'}, 'Rank: ');
			var sel = el('select', {id: 'gp-' + id + '-rank'});
			sel.appendChild(el('option', {value: 'all'}, 'all ranks'));
			ranks.forEach(function (r, i) {
				sel.appendChild(el('option', {value: String(i)}, 'rank ' + r.rank));
			});
			lab.appendChild(sel);
			sec.appendChild(lab);
			sel.addEventListener('change', function () {
				try {
					box.textContent = '';
					var i = sel.value === 'all' ? -1 : Number(sel.value);
					var t = i < 0 ? null : ranks[i].summary.tables[key];
					draw(i < 0 ? table(key) : t ? {t: t, ptr: P('/ranks', i, 'summary', 'tables', key)} : null, box);
				} catch (e) {
					fail(id, e);
				}
			});
		}
		sec.appendChild(box);
		draw(table(key), box);
	}

	/* Destroys the charts of names, before a section is drawn again. */
	function undraw(names) {
		names.forEach(function (n) {
			if (R.charts[n]) {
				R.charts[n].destroy();
				delete R.charts[n];
			}
		});
	}

	function operators(sec) {
		var op0 = table('operator');
		if (!op0 || !hasRows(op0.t))
			return empty(sec, (op0 && op0.t.empty) || 'No operators recorded.');
		rankSelect(sec, 'operators', 'operator', function (op, box) {
			undraw(['op-self', 'op-total']);
			if (!op || !hasRows(op.t))
				return box.appendChild(el('p', {class: 'gp-note'}, 'No operators recorded in this rank.'));
			var part = op.t.sections[0], u = R.data.summary.time_unit;
			if (colOf(op.t, part, 'self_total'))
				barsTop(box, 'op-self', op, part, 0, ['self_total'], 'self_total', function (rows) {
					var r = rows[0];
					return [r.row.name + ' is the heaviest operator by self time: ', num('time', P(r.ptr, 'self_total')),
						' ' + u + ' self (', num('time', P(r.ptr, 'cpu_total')), ' ' + u + ' total, ',
						num('percent', P(r.ptr, 'cpu_ratio')), ' CPU ratio).'];
				});
			var hasGpu = part.rows.some(function (r) { return r.gpu_total > 0; });
			barsTop(box, 'op-total', op, part, 0, hasGpu ? ['cpu_total', 'gpu_total'] : ['cpu_total'], 'cpu_total',
				function (rows) {
					var r = rows[0];
					return [r.row.name + ' is the heaviest operator by total time: ', num('time', P(r.ptr, 'cpu_total')),
						' ' + u + ' (', num('percent', P(r.ptr, 'cpu_ratio')), ') over ', num('count', P(r.ptr, 'calls')),
						' calls.'];
				});
			allTables(box, op);
		});
	}

	function kernels(sec) {
		var k0 = table('kernel');
		if (!k0 || !hasRows(k0.t))
			return empty(sec, 'No GPU work recorded.');
		rankSelect(sec, 'kernels', 'kernel', function (k, box) {
			undraw(['kernels']);
			if (!k || !hasRows(k.t))
				return box.appendChild(el('p', {class: 'gp-note'}, 'No GPU work recorded in this rank.'));
			var u = R.data.summary.time_unit;
			barsTop(box, 'kernels', k, k.t.sections[0], 0, ['gpu_total'], 'gpu_total', function (rows) {
				var r = rows[0];
				return [r.row.name + ' is the heaviest kernel: ', num('time', P(r.ptr, 'gpu_total')), ' ' + u + ' (',
					num('percent', P(r.ptr, 'gpu_ratio')), ' of GPU time) over ', num('count', P(r.ptr, 'calls')),
					' launches.'];
			});
			allTables(box, k);
		});
	}

	/* The timeline's parts whose label starts with prefix. */
	function timelineParts(prefix) {
		var tl = table('timeline'), out = [];
		if (tl)
			tl.t.sections.forEach(function (p, i) {
				if (p.rows && p.rows.length && String(p.label || '').indexOf(prefix) === 0)
					out.push(i);
			});
		return {tl: tl, parts: out};
	}

	function memory(sec) {
		var m = table('memory'), ts = timelineParts('memory ');
		if (!ts.parts.length && (!m || !hasRows(m.t)))
			return empty(sec, 'No memory events recorded (run with --profile-memory).');
		if (ts.parts.length) {
			var cap = ['Memory in use over time, one line per device; peak: '];
			ts.parts.forEach(function (pi, i) {
				var p = ts.tl.t.sections[pi];
				cap.push((i ? ', ' : '') + (p.title || p.label) + ' ',
					num('bytes', P(ts.tl.ptr, 'sections', pi, 'facts', 'peak_bytes')));
			});
			cap.push('.');
			lines(sec, 'memory-timeline', ts.tl, ts.parts, 'start', 'in_use', cap);
		}
		if (m && hasRows(m.t)) {
			var part = m.t.sections[0];
			barsTop(sec, 'memory-peak', m, part, 0, ['peak_increase'], 'peak_increase', function (rows) {
				var r = rows[0], c = ['Peak increase per operator: ' + r.row.name + ' raised the bytes in use the most, by ',
					num('bytes', P(r.ptr, 'peak_increase'))];
				if (part.facts && part.facts.peak_in_use_bytes != null)
					c.push(', of a peak of ', num('bytes', P(m.ptr, 'sections', 0, 'facts', 'peak_in_use_bytes')), ' in use');
				c.push('.');
				return c;
			});
			allTables(sec, m);
		}
	}

	function devices(sec) {
		var ts = timelineParts('utilization ');
		if (!ts.parts.length)
			return empty(sec, 'No GPU work recorded.');
		var cap = ['GPU utilisation over the whole run (% of each bin in which a kernel or communication ran, as the Device Summary counts it)'];
		var dev = table('device'), win = R.data.summary.window || {};
		var over = win.source === 'ProfileStep' ? ' over the steps (the window)' : ' over the run';
		if (dev && hasRows(dev.t)) {
			ts.parts.forEach(function (pi) {
				var name = String(ts.tl.t.sections[pi].label).slice('utilization '.length);
				dev.t.sections[0].rows.forEach(function (r, i) {
					if (r.device === name && typeof r.utilization === 'number')
						cap.push('; the Device Summary\'s utilisation of ' + name + over + ': ',
							num('percent', P(dev.ptr, 'sections', 0, 'rows', i, 'utilization')));
				});
			});
		}
		cap.push('.');
		lines(sec, 'utilization', ts.tl, ts.parts, 'start', 'busy', cap);
	}

	function distributed(sec) {
		var d = table('distributed');
		if (d && hasRows(d.t) && !colOf(d.t, d.t.sections[0], 'rank')) {
			/* one process's communication: its table, no ranks to compare */
			sec.appendChild(el('p', {class: 'gp-note'},
				'One process: give the trace of every rank to see the ranks side by side.'));
			return allTables(sec, d);
		}
		if (!d || !hasRows(d.t))
			return empty(sec, 'Not a distributed job: give the trace of every rank to see them side by side.');
		var part = d.t.sections[0], partPtr = P(d.ptr, 'sections', 0), flat = flatten(partPtr, part.rows);
		var strag = part.facts ? part.facts.straggler_rank : -1, u = R.data.summary.time_unit;
		/* the parts of a step, disjoint: stacked, they make the step */
		var keys = ['wait', 'computation', 'data_loading', 'outside', 'communication', 'contention'];
		var sentence = (d.t.notes || []).filter(function (n) {
			return /^(No s|S)traggler/.test(n);
		})[0];
		var cap = ['Per rank, per step (' + u + '): wait for other ranks, computation, data loading, time outside ' +
			'operators, its own communication and CPU contention stacked: they add up to the step.'];
		if (strag >= 0)
			cap.push(' Straggler: rank ', num('count', P(partPtr, 'facts', 'straggler_rank')), ' (outlined).');
		else
			cap.push(' No straggler.');
		var ds = keys.filter(function (k) {
			return colOf(d.t, part, k) && flat.some(function (r) { return typeof r.row[k] === 'number'; });
		}).map(function (k, i) {
			var x = dataset(colOf(d.t, part, k).name, 'time', flat.map(function (r) { return P(r.ptr, k); }), i);
			x.borderWidth = flat.map(function (r) { return r.row.rank === strag ? 3 : 0; });
			x.borderColor = '#000000';
			x.maxBarThickness = 90;
			x.stack = 'step';
			return x;
		});
		chart(sec, 'distributed', partPtr, {
			type: 'bar',
			data: {
				labels: flat.map(function (r) {
					return 'rank ' + r.row.rank + (r.row.rank === strag ? ' (straggler)' : '');
				}),
				datasets: ds
			},
			options: {scales: {x: {stacked: true}, y: axis(unitTitle('time'), 'time', {stacked: true})}}
		}, cap);
		if (sentence)
			sec.appendChild(el('p', {class: 'gp-straggler'}, sentence));
		allTables(sec, d);
		var c = table('collectives');
		if (c && hasRows(c.t))
			allTables(sec, c);
	}

	/* gprof-dl advise's findings: the Advice Summary, as it is */
	function advice(sec) {
		var a = table('advice');
		if (!a || !hasRows(a.t))
			return empty(sec, 'No finding: no rule of gprof-dl advise crossed its threshold.');
		allTables(sec, a);
	}

	function diff(sec) {
		var b = R.data.baseline;
		if (!b)
			return empty(sec, 'No baseline: give --baseline FILE... to compare with another run.');
		var D = b.diff, base = '/baseline/diff', u = D.time_unit;
		var dl = el('dl', {class: 'gp-facts'});
		fact(dl, 'A (baseline)', el('span', {class: 'gp-path'}, D.a.file), ', ', num('count', base + '/a/steps'), ' steps');
		fact(dl, 'B (this run)', el('span', {class: 'gp-path'}, D.b.file), ', ', num('count', base + '/b/steps'), ' steps');
		fact(dl, 'Times', D.per_step ? 'per step' : 'in total');
		sec.appendChild(dl);
		var keys = Object.keys(D.tables), shown = false;
		['operator', 'model', 'kernel', 'userdefined', 'memory-manipulation'].some(function (k) {
			var t = D.tables[k];
			if (!hasRows(t))
				return false;
			var tp = {t: t, ptr: P(base, 'tables', k)}, part = t.sections[0];
			var flat = flatten(tp.ptr + '/sections/0', part.rows).filter(function (r) {
				return r.depth === 0;
			}).slice(0, TOP_CHART);
			var gpu = flat.some(function (r) { return r.row.gpu_delta; });
			var r0 = flat[0];
			var cap = ['Largest changes, B - A (' + u + (D.per_step ? ' per step' : '') + ', ' + t.title + '): ' +
				r0.row.name + ' (' + r0.row.status + ') by ', num('time', P(r0.ptr, 'cpu_delta')), ' ' + u + ' CPU'];
			if (typeof r0.row.cpu_delta_pct === 'number')
				cap.push(' (', num('percent', P(r0.ptr, 'cpu_delta_pct')), ')');
			cap.push('.');
			chart(sec, 'diff', P(tp.ptr, 'sections', 0), {
				type: 'bar',
				data: {
					labels: flat.map(function (r) { return short(r.row.name); }),
					datasets: (gpu ? ['cpu_delta', 'gpu_delta'] : ['cpu_delta']).map(function (key, i) {
						return dataset(colOf(t, part, key).name, 'time', flat.map(function (r) {
							return P(r.ptr, key);
						}), i);
					})
				},
				options: {indexAxis: 'y', scales: {x: axis(unitTitle('time'), 'time'), y: {ticks: {autoSkip: false}}}}
			}, cap, barAspect(flat.length));
			shown = true;
			return true;
		});
		keys.forEach(function (k) {
			if (hasRows(D.tables[k]))
				allTables(sec, {t: D.tables[k], ptr: P(base, 'tables', k)});
		});
		if (!shown && !keys.some(function (k) { return hasRows(D.tables[k]); }))
			empty(sec, 'Nothing to compare: no rows in either run.');
	}

	var BUILD = {
		advice: advice, overview: overview, steps: steps, operators: operators, kernels: kernels, memory: memory,
		devices: devices, distributed: distributed, diff: diff
	};

	/* ---- the page --------------------------------------------------------------- */

	function main() {
		var root = document.getElementById('gp-root');
		try {
			R.data = JSON.parse(document.getElementById('gprof-dl-data').textContent);
		} catch (e) {
			fail('reading the document', e);
			return;
		}
		if (typeof Chart === 'undefined')
			fail('Chart.js', 'not loaded');
		root.textContent = '';
		var header = el('header', {class: 'gp-header'});
		header.appendChild(el('h1', {id: 'gp-title'}, R.data.title));
		header.appendChild(el('p', {class: 'gp-sub'}, 'gprof-dl ' + R.data.version + ' \u00b7 ' +
			R.data.command.join(' ')));
		var nav = el('nav', {class: 'gp-nav', 'aria-label': 'Sections'});
		SECTIONS.forEach(function (s) {
			nav.appendChild(el('a', {href: '#' + s[0]}, s[1]));
		});
		header.appendChild(nav);
		root.appendChild(header);
		var main = el('main');
		root.appendChild(main);
		SECTIONS.forEach(function (s) {
			var sec = el('section', {class: 'gp-section', id: s[0], 'data-state': 'ok'});
			sec.appendChild(el('h2', null, s[1]));
			main.appendChild(sec);
			try {
				BUILD[s[0]](sec);
			} catch (e) {
				fail(s[0], e);
			}
			if (sec.getAttribute('data-state') === 'empty')
				nav.querySelector('a[href="#' + s[0] + '"]').classList.add('gp-nav-empty');
		});
		document.title = R.data.title;
	}

	if (document.readyState === 'loading')
		document.addEventListener('DOMContentLoaded', main);
	else
		main();
})();
