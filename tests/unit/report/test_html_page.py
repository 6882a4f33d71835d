"""The HTML page: names from the model stay text, nothing is loaded from anywhere, and the
``--html`` / ``npuplan report`` commands write whole files or fail in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from npuplan.cli import main
from npuplan.report import html_page
from npuplan.report.html_page import plotly_js, script_json, table

from .plans import HOSTILE, SCENARIO, SCRIPT_END, hostile_model

pytest.importorskip("plotly")

TARGET = ["--accelerator-config", SCENARIO["accelerator_config"], "--system-config", SCENARIO["system_config"],
          "--memory-mode", SCENARIO["memory_mode"]]
# Anything that would make the browser fetch: an element with a src/href, CSS imports and urls.
LOADS = re.compile(r"<(script|img|iframe|link|embed|object|source|video|audio|frame|input|base|use|image)\b[^>]*"
                   r"\b(src|href|data|srcset|xlink:href)\s*=|<form\b[^>]*\baction\s*=|http-equiv=[\"']?refresh|@import|"
                   r"url\(\s*['\"]?(https?:)?//", re.IGNORECASE)


def test_script_json_cannot_end_the_script_element() -> None:
    value = {"name": SCRIPT_END + HOSTILE + "&amp;\u2028\u2029"}
    text = script_json(value)
    assert not set("<>&") & set(text) and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == value


def test_table_cells_are_escaped() -> None:
    markup = table(("name", "<b>bytes</b>"), [[HOSTILE, 3.5], [None, 1024]], row_classes=['x" onclick="y', ""])
    assert "<img" not in markup and "<b>" not in markup and 'onclick="y' not in markup
    assert "&lt;img src=x onerror=alert(1)&gt;" in markup and 'data-sort="1024"' in markup


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory, ds_cnn: Path) -> Path:
    """The report of ds_cnn with every tensor and op named after markup."""
    out = tmp_path_factory.mktemp("hostile")
    model = hostile_model(ds_cnn, out / "hostile.tflite")
    assert main(["plan", str(model), *TARGET, "--output-dir", str(out), "--quiet", "--html"]) == 0
    return out / "hostile_report.html"


def test_hostile_names_show_as_text_and_run_nothing(hostile_report: Path) -> None:
    page = hostile_report.read_text(encoding="utf-8")
    assert HOSTILE not in page and SCRIPT_END not in page
    assert "onerror=alert(1)>" not in page and "<script>alert" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # in the op and buffer tables
    # in the charts' data: HTML-escaped for plotly's hover text, then JSON-escaped for the script
    assert "\\u0026lt;img src=x onerror=alert(1)\\u0026gt;" in page
    assert page.count("<script") == 3 and page.count("</script>") == 3


def test_the_page_loads_nothing(hostile_report: Path) -> None:
    page = hostile_report.read_text(encoding="utf-8")
    assert not LOADS.findall(page)
    assert "default-src 'none'" in page  # the browser refuses any request the page might make


def test_report_command_remakes_the_plans_page_exactly(tmp_path, hostile_report: Path) -> None:
    again = tmp_path / "again.html"
    assert main(["report", str(hostile_report.parent / "hostile_plan.json"), "-o", str(again)]) == 0
    assert again.read_bytes() == hostile_report.read_bytes()


def test_two_plans_make_a_comparison(tmp_path, capsys, ds_cnn: Path) -> None:
    for name, accelerator in (("a", "ethos-u55-128"), ("b", "ethos-u55-64")):
        target = [*TARGET[2:], "--accelerator-config", accelerator]
        assert main(["plan", str(ds_cnn), *target, "--output-dir", str(tmp_path / name), "--quiet"]) == 0
    a, b = (tmp_path / n / "ds_cnn_kws_plan.json" for n in "ab")
    document = json.loads(b.read_text())
    document["network"] = HOSTILE
    b.write_text(json.dumps(document))
    out = tmp_path / "diff.html"
    assert main(["report", str(a), str(b), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert HOSTILE not in page and not LOADS.findall(page)
    assert "ethos-u55-64" in page and 'class="changed"' in page


def _fails_cleanly(capsys, argv: list[str], out: Path, fragment: str, status: int = 1) -> None:
    assert main(argv) == status
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], lines
    assert not out.exists() and not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")]


def test_bad_plan_files_fail_in_one_line_and_write_nothing(tmp_path, capsys, hostile_report: Path) -> None:
    out = tmp_path / "r.html"
    _fails_cleanly(capsys, ["report", str(tmp_path / "missing.json"), "-o", str(out)], out, "missing.json")
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    _fails_cleanly(capsys, ["report", str(junk), "-o", str(out)], out, "not valid JSON")
    document = json.loads((hostile_report.parent / "hostile_plan.json").read_text())
    document["ops"][0]["cost"] = {"total_cycles": "fast"}
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    _fails_cleanly(capsys, ["report", str(broken), "-o", str(out)], out, "ops[0].cost")
    del document["target"]
    broken.write_text(json.dumps(document))
    _fails_cleanly(capsys, ["report", str(broken), "-o", str(out)], out, "target")
    _fails_cleanly(capsys, ["report", str(junk), str(junk), str(junk), "-o", str(out)], out, "two", status=2)
    plan = hostile_report.parent / "hostile_plan.json"
    before = plan.read_bytes()
    assert main(["report", str(plan), "-o", str(plan)]) == 1
    assert "overwrite its own plan JSON" in capsys.readouterr().err and plan.read_bytes() == before


def test_missing_plotly_is_one_line_naming_the_extra(tmp_path, capsys, monkeypatch, ds_cnn: Path) -> None:
    monkeypatch.setattr(html_page, "PLOTLY_PACKAGE", "no_such_plotly_package")
    plotly_js.cache_clear()  # read by an earlier test
    out = tmp_path / "out"
    assert main(["plan", str(ds_cnn), *TARGET, "--output-dir", str(out), "--quiet", "--html"]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and 'pip install "npuplan[report]"' in lines[0]
    assert not out.exists() or not any(out.iterdir())
    plotly_js.cache_clear()
