"""Names from a model are untrusted text: CSV cells stay text, file names stay in the directory."""

from __future__ import annotations

import csv
import io

from npuplan.report.files import _csv_text, file_name_part, text_cell


def test_formula_like_cells_stay_text() -> None:
    assert text_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    for start in "+-@\t\r":
        assert text_cell(start + "cmd") == "'" + start + "cmd"
    assert text_cell("conv_1") == "conv_1"
    assert text_cell(-3) == -3 and text_cell(1.5) == 1.5


def test_csv_rows_are_escaped() -> None:
    text = _csv_text(("name", "cycles"), [["=1+1", -5], ["ok", 2]])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1] == ["'=1+1", "-5"] and rows[2] == ["ok", "2"]


def test_file_name_parts_cannot_leave_the_directory() -> None:
    assert file_name_part("../../etc/passwd") == "_.._etc_passwd"
    assert "/" not in file_name_part("a/b\\c") and "\\" not in file_name_part("a/b\\c")
    assert file_name_part("..") == "_" and file_name_part("") == "_"
    assert file_name_part("Ethos_U55_High_End_Embedded") == "Ethos_U55_High_End_Embedded"
