"""One self-contained HTML page: styles, tables, plotly.js embedded once and the charts' data.

The page loads nothing: plotly.js is inlined (from the ``plotly`` package, the one outside library
the report uses, located here only) and a Content-Security-Policy forbids every network request.
Untrusted text (names from the model or plan) is escaped everywhere it lands: ``html.escape`` in
the markup, and JSON inside ``<script>`` has ``<``, ``>``, ``&`` and the JavaScript line separators
written as ``\\uXXXX`` escapes, so no value can end the script element.
"""

from __future__ import annotations

import functools
import html
import importlib.util
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from npuplan.version import __version__
from npuplan.errors import NpuplanError

# The package whose plotly.js the page embeds.
PLOTLY_PACKAGE = "plotly"
# Forbid every request (default-src 'none'); inline scripts and styles are the page's own.
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data: blob:; font-src data:")

_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
                   0x2028: "\\u2028", 0x2029: "\\u2029"}

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.sub{color:#666;margin-top:0;word-break:break-all} code{word-break:break-all}
.cards{display:flex;flex-wrap:wrap;gap:.6em;margin:.8em 0}
.card{border:1px solid #ddd;border-radius:6px;padding:.5em .8em;min-width:9em}
.card b{display:block;font-size:1.25em}.card span{color:#666;font-size:.85em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
th,td{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f4f4f4;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
th[data-dir=asc]::after{content:" \\25B2"} th[data-dir=desc]::after{content:" \\25BC"}
td.name{min-width:16em;max-width:38em;word-break:break-all}
tr.changed td{background:#fff6e0} tr.cpu td{background:#fdeeee}
.chart{width:100%;min-height:260px}
.scroll{max-height:36em;overflow:auto}
details{margin:.5em 0}
"""

# Sort a table by a clicked header: numbers by their data-sort value, text case-insensitively.
_SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, column) {
    th.addEventListener('click', function () {
      var ascending = th.dataset.dir !== 'asc';
      table.querySelectorAll('th').forEach(function (other) { delete other.dataset.dir; });
      th.dataset.dir = ascending ? 'asc' : 'desc';
      var body = table.tBodies[0];
      var key = function (row) {
        var cell = row.cells[column];
        if (!cell) { return ''; }
        return cell.dataset.sort !== undefined ? parseFloat(cell.dataset.sort) : cell.textContent.toLowerCase();
      };
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = x < y ? -1 : x > y ? 1 : 0;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

# Draw every chart from the JSON data block (hover lines joined, shared hover texts shared: see
# html_figures); a chart that fails says so in its own box.
_CHARTS_JS = """
(function () {
  var figures = JSON.parse(document.getElementById('npuplan-figures').textContent);
  figures.forEach(function (figure) {
    figure.data.forEach(function (trace) {
      var lines = trace.hoverlines;
      if (lines === undefined) { return; }
      trace.hovertext = typeof lines === 'number' ? figure.data[lines].hovertext
        : lines.map(function (point) { return point.join('<br>'); });
      delete trace.hoverlines;
    });
    var box = document.getElementById(figure.id);
    try {
      Plotly.newPlot(box, figure.data, figure.layout, {responsive: true, displaylogo: false});
    } catch (error) {
      box.textContent = 'chart failed: ' + error;
      console.error(error);
    }
  });
})();
"""


@functools.lru_cache(maxsize=1)
def plotly_js() -> bytes:
    """plotly.js's minified bundle (UTF-8) from the installed ``plotly`` package, read once per
    process; kept as bytes, as the page is built, since decoding and re-encoding its 4.8 MB would
    cost more than the rest of the page."""
    # Located, not imported: importing plotly costs ~20 ms and the page needs only its bundle.
    spec = importlib.util.find_spec(PLOTLY_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise NpuplanError('the HTML report needs plotly: pip install "npuplan[report]"')
    bundle = Path(list(spec.submodule_search_locations)[0]) / "package_data" / "plotly.min.js"
    try:
        data = bundle.read_bytes()
    except OSError as error:
        raise NpuplanError(f"plotly is installed without its JavaScript bundle ({error.strerror or error}): "
                           'pip install --force-reinstall "npuplan[report]"') from None
    # The bundle holds no "</script" today; if one ever did, it would end the element early.
    return data.replace(b"</script", b"<\\/script") if b"</script" in data else data


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element (no ``<``, ``>``, ``&``)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False, default=str).translate(_SCRIPT_ESCAPES)


def text(value: object) -> str:
    """Untrusted ``value`` as HTML text or attribute content."""
    return html.escape(str(value), quote=True)


def number_text(value: float | int) -> str:
    """A number for a table cell: whole numbers with thousands separators, others to 4 significant
    figures (``nan`` and infinities as words)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def cell(value: object, *, css: str = "") -> str:
    """One ``<td>``: numbers right-aligned with a ``data-sort`` key, anything else escaped text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        sort = value if math.isfinite(value) else 0
        return f'<td class="num" data-sort="{sort!r}">{number_text(value)}</td>'
    klass = f' class="{css}"' if css else ""
    return f"<td{klass}>{text('' if value is None else value)}</td>"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, sortable: bool = True,
          row_classes: Sequence[str] | None = None, name_columns: Sequence[int] = ()) -> str:
    """An HTML table of escaped cells; ``sortable`` tables sort by a clicked header."""
    head = "".join(f"<th>{text(h)}</th>" for h in headers)
    body = []
    for k, row in enumerate(rows):
        klass = f' class="{text(row_classes[k])}"' if row_classes and row_classes[k] else ""
        cells = "".join(cell(v, css="name" if i in name_columns else "") for i, v in enumerate(row))
        body.append(f"<tr{klass}>{cells}</tr>")
    kind = ' class="sortable"' if sortable else ""
    return f"<table{kind}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def chart(chart_id: str) -> str:
    return f'<div class="chart" id="{text(chart_id)}"></div>'


def page(title: str, body: str, figures: Sequence[dict[str, Any]]) -> bytes:
    """The whole document as UTF-8: ``body`` is trusted markup (built with ``text``/``table``),
    ``figures`` the charts' specs, each with the ``id`` of its ``chart`` div."""
    head = "".join((
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="npuplan {text(__version__)}">',
        f"<title>{text(title)}</title><style>{_STYLE}</style></head><body>\n",
        body,
        f'\n<p class="sub">Made by npuplan {text(__version__)}; opens offline (plotly.js is embedded).</p>',
        f'\n<script type="application/json" id="npuplan-figures">{script_json(list(figures))}</script>\n',
        "<script>",
    ))
    tail = f"</script>\n<script>{_CHARTS_JS}{_SORT_JS}</script>\n</body></html>\n"
    return b"".join((head.encode("utf-8"), plotly_js(), tail.encode("utf-8")))
