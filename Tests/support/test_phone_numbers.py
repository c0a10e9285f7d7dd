"""The phone-number data the portal ships and the fixture its Swift tests check are both derived
from Google's libphonenumber metadata as the pinned PyPI package phonenumbers carries it: this
regenerates both and compares them with the committed files, so the oracle really is used and
no number plan is written by hand (issue #18, item 2)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import phonenumbers

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts/phone-metadata"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"phone_metadata_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    # fixture.py imports its sibling as `generate`, found beside it when it runs as a script:
    # here the sibling is loaded from its file and lent under that name while fixture.py loads.
    sibling = load("generate") if name == "fixture" else None
    if sibling is not None:
        sys.modules["generate"] = sibling
    try:
        spec.loader.exec_module(module)
    finally:
        if sibling is not None:
            del sys.modules["generate"]
    return module


def test_the_pinned_phonenumbers_is_installed():
    assert phonenumbers.__version__ == load("generate").PINNED_VERSION


def test_the_shipped_metadata_is_what_the_generator_writes_from_phonenumbers():
    generate = load("generate")
    committed = generate.OUTPUT.read_text()
    assert "Apache License" in committed and "libphonenumber" in committed and "Do not edit by hand" in committed
    assert committed == generate.render(), "run python3 scripts/phone-metadata/generate.py"


def test_the_fixture_is_what_phonenumbers_says():
    fixture = load("fixture")
    committed = fixture.OUTPUT.read_text()
    assert committed == fixture.render(), "run python3 scripts/phone-metadata/fixture.py"
    rows = [line.split("\t") for line in committed.splitlines() if not line.startswith(("#", "input\t"))]
    # Every row, checked again here from phonenumbers directly (not through the generator's code).
    for row in rows:
        text, e164 = row[0], row[1]
        try:
            number = phonenumbers.parse(text, "DE")
            valid = phonenumbers.is_valid_number(number)
        except phonenumbers.NumberParseException:
            valid = False
        if not valid:
            assert e164 == "invalid", text
            continue
        assert e164 == phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164), text
        assert row[4] == phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL), text
        assert row[2] == phonenumbers.region_code_for_number(number), text
    kinds = {row[3] for row in rows}
    assert {"fixed-line", "mobile", "premium-rate", "shared-cost", "personal", "toll-free", "voip", "uan"} <= kinds
