#!/usr/bin/env python3
"""Writes Sources/Hotline/Domain/PhoneNumberMetadata.generated.swift from Google's libphonenumber
metadata as the pinned PyPI package `phonenumbers` carries it (scripts/install-deps.sh installs
exactly that version).

Only what the portal needs to parse, classify and format a number of any country is kept: per
region its country code, national-prefix-for-parsing rule, leading digits (regions sharing a
country code), the number-type patterns with their possible lengths, and, for the main region of
each country code, the international number formats. The data goes into one string literal of
tab-separated lines (a literal of nested Swift values would take the compiler minutes);
PhoneNumberMetadata.swift reads it once, on first use.

Usage: python3 scripts/phone-metadata/generate.py [--check]
  --check: write nothing; exit 1 if the committed file differs from what this would write.
"""
import pathlib
import sys

import phonenumbers
from phonenumbers import COUNTRY_CODE_TO_REGION_CODE
from phonenumbers.phonemetadata import PhoneMetadata

PINNED_VERSION = "9.0.43"
ROOT = pathlib.Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "Sources/Hotline/Domain/PhoneNumberMetadata.generated.swift"

# The number types in libphonenumber's order of precedence (PhoneNumberUtil.getNumberTypeHelper),
# named as PhoneNumberType's raw values in Swift.
TYPES = [
    ("premium-rate", "premium_rate"),
    ("toll-free", "toll_free"),
    ("shared-cost", "shared_cost"),
    ("voip", "voip"),
    ("personal", "personal_number"),
    ("pager", "pager"),
    ("uan", "uan"),
    ("voicemail", "voicemail"),
    ("fixed-line", "fixed_line"),
    ("mobile", "mobile"),
]


def clean(text):
    """A field: no tab or newline may occur (the line format), nor a triple quote (the literal)."""
    text = "" if text is None else str(text)
    assert "\t" not in text and "\n" not in text and '"""' not in text, text
    return text


def template(rule):
    """libphonenumber's `$1` group references (the Python port writes `\\1`)."""
    if rule is None:
        return ""
    assert "$" not in rule, rule
    out, i = [], 0
    while i < len(rule):
        if rule[i] == "\\":
            assert rule[i + 1].isdigit(), rule
            out.append("$" + rule[i + 1])
            i += 2
        else:
            out.append(rule[i])
            i += 1
    return clean("".join(out))


def lengths(values):
    return ",".join(str(v) for v in (values or ()))


def desc_line(name, desc):
    """None when the type has no numbers in this region (libphonenumber's possible length -1)."""
    if desc is None or not desc.national_number_pattern:
        return None
    return "\t".join(["D", name, clean(desc.national_number_pattern), lengths(desc.possible_length),
                      lengths(desc.possible_length_local_only)])


def region_lines(region, country_code, main):
    metadata = (PhoneMetadata.metadata_for_nongeo_region(country_code) if region == "001"
                else PhoneMetadata.metadata_for_region(region))
    assert metadata is not None and metadata.country_code == country_code, (region, country_code)
    lines = ["\t".join([
        "R", region, str(country_code), "1" if main else "0",
        clean(metadata.national_prefix_for_parsing), template(metadata.national_prefix_transform_rule),
        clean(metadata.leading_digits), "1" if metadata.same_mobile_and_fixed_line_pattern else "0",
    ])]
    lines.append(desc_line("general", metadata.general_desc))
    assert lines[-1] is not None, region
    for name, attribute in TYPES:
        line = desc_line(name, getattr(metadata, attribute))
        if line:
            lines.append(line)
    if main:
        # The international format: libphonenumber uses intl_number_format where a region has
        # one (formats marked "NA" there are absent), else the national formats.
        formats = metadata.intl_number_format or metadata.number_format
        for number_format in formats:
            leading = number_format.leading_digits_pattern
            # Only the last (most detailed) leading-digits pattern is ever used.
            lines.append("\t".join(["F", clean(number_format.pattern), template(number_format.format),
                                    clean(leading[-1]) if leading else ""]))
    return lines


def render():
    if phonenumbers.__version__ != PINNED_VERSION:
        sys.exit(f"phonenumbers {PINNED_VERSION} expected (scripts/install-deps.sh), found {phonenumbers.__version__}")
    lines = []
    for country_code in sorted(COUNTRY_CODE_TO_REGION_CODE):
        # The first region of a shared country code is its main one (the US for +1).
        for index, region in enumerate(COUNTRY_CODE_TO_REGION_CODE[country_code]):
            lines += region_lines(region, country_code, main=index == 0 or region == "001")
    data = "\n".join(lines)
    return f'''// Phone number metadata from libphonenumber (https://github.com/google/libphonenumber),
// Copyright (C) Google Inc. and the libphonenumber authors, licensed under the Apache License,
// Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0).
// GENERATED by scripts/phone-metadata/generate.py from the PyPI package phonenumbers {PINNED_VERSION}
// (a port of libphonenumber carrying its metadata). Do not edit by hand: change the pinned version
// and run the script again.
//
// Lines, tab-separated (read by PhoneNumberMetadata.swift):
//   R region country-code main national-prefix-for-parsing transform-rule leading-digits same-mobile-and-fixed-line
//   D type pattern possible-lengths local-only-lengths     (the region's number types; "general" first)
//   F pattern format leading-digits                        (international formats, main regions only)

extension PhoneNumberMetadata {{
    static let source = #"""
{data}
"""#
}}
'''


def main():
    text = render()
    if "--check" in sys.argv[1:]:
        if OUTPUT.read_text() != text:
            sys.exit(f"{OUTPUT.relative_to(ROOT)} differs from what scripts/phone-metadata/generate.py writes")
        return
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(text.encode())} bytes)")


if __name__ == "__main__":
    main()
