"""Issue 28, item 2: the audit CSV export opened as German-locale Excel and LibreOffice open a
`.csv`, with `;` between cells. A value like `x;=1+1;` then spans three cells, the middle one
`=1+1`, and a quote that is not at its cell's start is plain text, so quoting alone does not help.
Names typed at the sign-in form reach the export unchanged (a failed sign-in's actor and its
`typed` detail), so anyone who can reach the form can plant such a value.

Two readings show that no cell is a formula: Python's csv module with `;`, and LibreOffice Calc
itself (headless, LANG=de_DE.UTF-8, the CSV filter with `;` as separator), converting the export
to flat OpenDocument XML, where a formula cell is one with a `table:formula` attribute."""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

from support.portal_client import Client

# Typed as usernames: each fails like any unknown name and lands in the audit trail as typed.
TRICKY_NAMES = ["x;=1+1;", "x; =2+2;", "x;+3+3", "x;-4+4", "x;@SUM(5)", 'x;"=6+6', "x,=7+7", "x;=HYPERLINK(8)"]
FORMULA_START = re.compile(r"^\s*[=+\-@]")
# LibreOffice's CSV filter: separator ";" (59), text delimiter '"' (34), UTF-8 (76), from line 1.
GERMAN_CSV_FILTER = "CSV:59,34,76,1"


def exported_csv(portal) -> bytes:
    stranger = portal.client()
    for name in TRICKY_NAMES:
        answer = stranger.sign_in(name, "wrong")
        assert answer.status == 401, answer.describe()
    admin = Client(portal.base_url).signed_in("tt-admin", "Admin-Pass-1")
    export = admin.get("/admin/audit/export.csv?action=signin&outcome=failure")
    assert export.status == 200, export.describe()
    return export.body.encode("utf-8")


def test_no_cell_of_the_export_is_a_formula_in_a_semicolon_reading(portals):
    raw = exported_csv(portals())
    text = raw.decode("utf-8")
    cells = [cell for row in csv.reader(io.StringIO(text, newline=""), delimiter=";") for cell in row]
    assert len(cells) > len(TRICKY_NAMES)
    formulas = [cell for cell in cells if FORMULA_START.match(cell)]
    assert formulas == [], formulas
    # The names are there (as typed, apart from the ' before a trigger).
    assert "x;'=1+1;" in text


def test_libreoffice_calc_in_a_german_locale_finds_no_formula(portals, tmp_path):
    soffice = shutil.which("soffice")
    assert soffice, "LibreOffice Calc is missing (scripts/install-deps.sh installs libreoffice-calc-nogui)"
    source = tmp_path / "audit.csv"
    source.write_bytes(exported_csv(portals()))
    converted = convert_in_german_calc(soffice, source, tmp_path)
    flat = converted.read_text(encoding="utf-8")
    assert "table:formula=" not in flat, re.findall(r'table:formula="[^"]*"', flat)
    # Calc did read the export: the header line is one cell (no ";" in it), a name's cell is text.
    assert "<text:p>seq,time_utc,actor,role,action,outcome,address,request_id,subject,details,prev_hash,hash</text:p>" in flat
    assert "<text:p>&apos;=1+1</text:p>" in flat, flat[:3000]


def convert_in_german_calc(soffice: str, source: Path, workdir: Path) -> Path:
    """`source` opened by Calc as a German user would (locale de_DE.UTF-8, `;` between cells) and
    saved as flat OpenDocument (.fods); a profile of its own under `workdir`."""
    environment = {**os.environ, "LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8", "HOME": str(workdir)}
    result = subprocess.run(
        [soffice, "--headless", "--norestore", f"-env:UserInstallation=file://{workdir / 'calc-profile'}",
         f"--infilter={GERMAN_CSV_FILTER}", "--convert-to", "fods", "--outdir", str(workdir / "out"), str(source)],
        capture_output=True, text=True, timeout=180, env=environment)
    converted = workdir / "out" / (source.stem + ".fods")
    assert converted.exists(), (result.returncode, result.stdout, result.stderr)
    return converted
