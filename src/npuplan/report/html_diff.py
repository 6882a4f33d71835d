"""Two plans side by side (``npuplan report A_plan.json B_plan.json -o diff.html``): what changed
in the options, the totals and each op's cycles, SRAM, block config and placement. Ops are matched
by name; an op only one plan has is a row of its own."""

from __future__ import annotations

from collections.abc import Sequence

from npuplan.records import record
from npuplan.report.html_figures import Figure, esc, kib
from npuplan.report.html_model import HtmlReport, OpRow
from npuplan.report.html_page import chart, number_text, page, table, text


@record
class OpChange:
    """One op name in either plan: its row in A and in B (``None`` where the plan lacks it)."""

    name: str
    a: OpRow | None
    b: OpRow | None

    @property
    def changed(self) -> bool:
        if self.a is None or self.b is None:
            return True
        return _facts(self.a) != _facts(self.b)


def _facts(op: OpRow) -> tuple[object, ...]:
    cycles = op.cycles.total_cycles if op.cycles else None
    return (op.placement, cycles, op.sram_usage_bytes, op.block_config, op.cascade, op.ofm_stripe, op.weight_buffering)


def op_changes(a: HtmlReport, b: HtmlReport) -> tuple[OpChange, ...]:
    """Every op name of A in A's order, then those only B has in B's order."""
    in_b = {op.name: op for op in b.ops}
    in_a = {op.name: op for op in a.ops}
    out = [OpChange(op.name, op, in_b.get(op.name)) for op in a.ops]
    out += [OpChange(op.name, None, op) for op in b.ops if op.name not in in_a]
    return tuple(out)


def option_rows(a: HtmlReport, b: HtmlReport) -> list[tuple[str, str, str]]:
    """(option, A, B) for every target option either plan records."""
    da, db = dict(a.target), dict(b.target)
    keys = list(da) + [k for k in db if k not in da]
    return [(k, da.get(k, ""), db.get(k, "")) for k in keys]


def total_rows(a: HtmlReport, b: HtmlReport) -> list[list[object]]:
    """(figure, A, B, B - A, change %) for every summary figure; the change only for numbers."""
    da, db = dict(a.summary), dict(b.summary)
    rows: list[list[object]] = []
    for key in list(da) + [k for k in db if k not in da]:
        va, vb = da.get(key), db.get(key)
        if _is_number(va) and _is_number(vb):
            x, y = float(va), float(vb)  # type: ignore[arg-type]
            rows.append([key, va, vb, y - x, 100.0 * (y - x) / x if x else None])
        else:
            rows.append([key, va, vb, None, None])
    return rows


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cycles(op: OpRow | None) -> float | None:
    return op.cycles.total_cycles if op is not None and op.cycles is not None else None


def _op_row(change: OpChange) -> list[object]:
    a, b = change.a, change.b
    ca, cb = _cycles(a), _cycles(b)
    delta = cb - ca if ca is not None and cb is not None else None

    def both(attr: str) -> list[object]:
        return [None if op is None else getattr(op, attr) for op in (a, b)]

    return [
        *both("step"), change.name, *(p.upper() if isinstance(p, str) else None for p in both("placement")),
        ca, cb, delta, 100.0 * delta / ca if delta is not None and ca else None,
        *both("sram_usage_bytes"), *both("block_config"), *both("cascade"),
        *(_stripe_rows(op) for op in (a, b)), *both("weight_buffering"),
    ]


def _stripe_rows(op: OpRow | None) -> int | None:
    return op.ofm_stripe[1] if op is not None and len(op.ofm_stripe) == 4 else None


OP_HEADERS = ("step A", "step B", "name", "placement A", "placement B", "cycles A", "cycles B", "cycles B-A",
              "cycles change %", "SRAM bytes A", "SRAM bytes B", "block config A", "block config B", "cascade A",
              "cascade B", "OFM stripe rows A", "OFM stripe rows B", "weights A", "weights B")


# The totals the headline states, as (summary CSV column, label).
HEADLINE_TOTALS = (("cycles_total", "cycles"), ("inference_time", "inference time (s)"),
                   ("sram_memory_used", "SRAM used (KiB)"), ("npu_operators", "NPU ops"), ("cpu_operators", "CPU ops"))
# How many ops the headline names (largest cycle changes, placement changes).
HEADLINE_OPS = 5


def headline(a: HtmlReport, b: HtmlReport, changes: Sequence[OpChange]) -> list[str]:
    """What changed from A to B in a few plain-text lines (names unescaped): the main totals, how
    many ops differ, the ops that moved between NPU and CPU and those whose cycles moved most."""
    lines = []
    totals = {row[0]: row for row in total_rows(a, b)}
    for key, label in HEADLINE_TOTALS:
        row = totals.get(key)
        if row is not None and row[3] is not None and row[3] != 0:
            pct = f" ({row[4]:+.1f}%)" if row[4] is not None else ""
            lines.append(f"{label}: {number_text(row[1])} -> {number_text(row[2])}{pct}")  # type: ignore[arg-type]
    only_a = [c.name for c in changes if c.b is None]
    only_b = [c.name for c in changes if c.a is None]
    moved = [c for c in changes if c.a is not None and c.b is not None and c.a.placement != c.b.placement]
    lines.append(f"{sum(c.changed for c in changes)} of {len(changes)} ops differ; {len(only_a)} only in A, "
                 f"{len(only_b)} only in B, {len(moved)} moved between NPU and CPU")
    for c in moved[:HEADLINE_OPS]:
        assert c.a is not None and c.b is not None
        lines.append(f"moved: {c.name} {c.a.placement.upper()} -> {c.b.placement.upper()}")
    deltas = [(cb - ca, c) for c in changes if (ca := _cycles(c.a)) is not None and (cb := _cycles(c.b)) is not None]
    for delta, c in sorted((d for d in deltas if d[0]), key=lambda d: -abs(d[0]))[:HEADLINE_OPS]:
        lines.append(f"cycles {delta:+,.0f}: {c.name} ({_cycles(c.a):,.0f} -> {_cycles(c.b):,.0f})")
    return lines


def _sram_compare(a: HtmlReport, b: HtmlReport) -> Figure:
    data = [{"type": "scatter", "mode": "lines", "line": {"shape": "hv"}, "name": label,
             "x": [s.step for s in r.sram], "y": [kib(s.total_bytes) for s in r.sram],
             "hovertext": [f"{label} step {s.step}: {esc(r.ops[s.step].name[:90])}" for s in r.sram],
             "hovertemplate": "%{hovertext}<br>%{y:.1f} KiB<extra></extra>"} for label, r in (("A", a), ("B", b))]
    return {"data": data, "layout": {"title": {"text": "Live SRAM per op step"}, "xaxis": {"title": {"text": "op step"}},
                                     "yaxis": {"title": {"text": "KiB"}}, "hovermode": "closest"}}


def _cycles_compare(changes: Sequence[OpChange]) -> Figure:
    both = [c for c in changes if _cycles(c.a) is not None and _cycles(c.b) is not None]
    x = list(range(len(both)))
    hover = [esc(c.name[:90]) for c in both]
    data = [{"type": "bar", "name": label, "x": x, "y": [_cycles(getattr(c, side)) for c in both],
             "hovertext": hover, "hovertemplate": "%{hovertext}<br>%{y:,.0f} cycles<extra>" + label + "</extra>"}
            for label, side in (("A", "a"), ("B", "b"))]
    return {"data": data, "layout": {"title": {"text": "Cycles of the ops both plans run on the NPU"},
                                     "xaxis": {"title": {"text": "op (in A's order)"}},
                                     "yaxis": {"title": {"text": "cycles"}}, "barmode": "group", "hovermode": "closest"}}


def render_diff(a: HtmlReport, b: HtmlReport) -> bytes:
    """The comparison page of plans A and B (UTF-8)."""
    changes = op_changes(a, b)
    options = option_rows(a, b)
    rows = [_op_row(c) for c in changes]
    classes = ["changed" if c.changed else "" for c in changes]
    changed = sum(c.changed for c in changes)
    totals = total_rows(a, b)
    body = "".join((
        f"<h1>npuplan comparison: {text(a.network)} (A) and {text(b.network)} (B)</h1>",
        f'<p class="sub">A: {text(a.source)}<br>B: {text(b.source)}</p>',
        "<h2>What changed</h2><ul>", *(f"<li>{text(line)}</li>" for line in headline(a, b, changes)), "</ul>",
        "<h2>Options</h2>",
        table(("option", "A", "B"), options, sortable=False,
              row_classes=["changed" if r[1] != r[2] else "" for r in options]),
        "<h2>Totals</h2>",
        table(("figure", "A", "B", "B - A", "change %"), totals,
              row_classes=["changed" if r[1] != r[2] else "" for r in totals]),
        "<h2>SRAM and cycles</h2>", chart("chart-sram"), chart("chart-cycles"),
        f"<h2>Ops</h2><p>{changed} of {len(changes)} ops differ (highlighted) in placement, cycles, SRAM, "
        "block config, cascade, stripes or weight buffering. Click a header to sort.</p>",
        table(OP_HEADERS, rows, row_classes=classes, name_columns=(2,)),
    ))
    figures = [dict(_sram_compare(a, b), id="chart-sram"), dict(_cycles_compare(changes), id="chart-cycles")]
    return page(f"npuplan comparison: {a.network} and {b.network}", body, figures)
