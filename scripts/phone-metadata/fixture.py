#!/usr/bin/env python3
"""Writes Tests/fixtures/phone-numbers.tsv: numbers as people type them, with what Google's
libphonenumber (the pinned PyPI package phonenumbers) says about each, for the Swift tests
(PhoneNumberTests) to check the portal's parser against.

The numbers are drawn deterministically (fixed seed): German fixed-line numbers across area codes
of every length, mobile, premium rate (0900, 0137), shared cost (0180, 0137), personal (0700),
toll free (0800), pager, UAN, voicemail, the withdrawn 0190 and the 118xx service numbers, foreign
numbers of many regions and types (shared country codes +1, +7, +44 included), non-geographic
ones (+800 ...), unassigned country codes (+999 ...) and invalid lengths. Each is written in one of
the forms the call page accepts (spaces, / - . brackets, +, 00, a national 0 for Germany,
"+49 (0)30"). Expected values come from phonenumbers.parse(input, "DE") and is_valid_number.

Usage: python3 scripts/phone-metadata/fixture.py [--check]
"""
import random
import re
import sys

import phonenumbers
from phonenumbers import PhoneNumberFormat, PhoneNumberType
from phonenumbers.phonemetadata import PhoneMetadata

# Its sibling: run as a script, Python puts this directory first on the module path.
from generate import PINNED_VERSION, ROOT

OUTPUT = ROOT / "Tests/fixtures/phone-numbers.tsv"
SEED = 18

TYPE_NAMES = {
    PhoneNumberType.FIXED_LINE: "fixed-line",
    PhoneNumberType.MOBILE: "mobile",
    PhoneNumberType.FIXED_LINE_OR_MOBILE: "fixed-line-or-mobile",
    PhoneNumberType.TOLL_FREE: "toll-free",
    PhoneNumberType.PREMIUM_RATE: "premium-rate",
    PhoneNumberType.SHARED_COST: "shared-cost",
    PhoneNumberType.PERSONAL_NUMBER: "personal",
    PhoneNumberType.VOIP: "voip",
    PhoneNumberType.PAGER: "pager",
    PhoneNumberType.UAN: "uan",
    PhoneNumberType.VOICEMAIL: "voicemail",
}
TYPE_ATTRIBUTES = {
    PhoneNumberType.FIXED_LINE: "fixed_line", PhoneNumberType.MOBILE: "mobile",
    PhoneNumberType.TOLL_FREE: "toll_free", PhoneNumberType.PREMIUM_RATE: "premium_rate",
    PhoneNumberType.SHARED_COST: "shared_cost", PhoneNumberType.PERSONAL_NUMBER: "personal_number",
    PhoneNumberType.VOIP: "voip", PhoneNumberType.PAGER: "pager", PhoneNumberType.UAN: "uan",
    PhoneNumberType.VOICEMAIL: "voicemail",
}
DEFAULT_ACCEPTED = {PhoneNumberType.FIXED_LINE, PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE_OR_MOBILE}
# What the call page accepts (PhoneNumber.swift): digits and separators, starting with + (or 00)
# or a national 0, at most 40 characters. libphonenumber takes more (letters, extensions, a
# German number without its 0); PhoneNumberTests checks that the portal refuses those.
ACCEPTED_FORM = re.compile(r"^\(?[+0][0-9 /\-.()\u00a0]*$")

FOREIGN = ["US", "CA", "AG", "JM", "PR", "RU", "KZ", "GB", "GG", "IM", "JE", "AT", "CH", "LI", "FR", "NL",
           "BE", "LU", "IT", "VA", "SM", "ES", "PT", "PL", "CZ", "DK", "SE", "NO", "FI", "IE", "TR", "GR",
           "HU", "RO", "UA", "IL", "AE", "EG", "NG", "ZA", "IN", "PK", "CN", "HK", "JP", "KR", "AU", "NZ",
           "BR", "AR", "MX", "CO", "SG", "ID", "TH", "NU", "SH", "VN"]
NON_GEOGRAPHIC = [800, 808, 870, 878, 881, 882, 883, 888, 979]


def expected(text):
    """The row for an input: what libphonenumber makes of it when parsing for Germany."""
    invalid = [text, "invalid", "-", "-", "-", "no", "-"]
    try:
        number = phonenumbers.parse(text, "DE")
    except phonenumbers.NumberParseException:
        return invalid
    if not phonenumbers.is_valid_number(number):
        return invalid
    number_type = phonenumbers.number_type(number)
    region = phonenumbers.region_code_for_number(number)
    nsn = phonenumbers.national_significant_number(number)
    return [
        text,
        phonenumbers.format_number(number, PhoneNumberFormat.E164),
        region,
        TYPE_NAMES[number_type],
        phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL),
        "yes" if region == "DE" and number_type in DEFAULT_ACCEPTED else "no",
        f"+{number.country_code} \u2022\u2022\u2022 \u2022\u2022\u2022 \u2022\u2022 {nsn[-2:]}",
    ]


def written(rng, country_code, nsn, german):
    """The number as someone might type it."""
    number = phonenumbers.parse(f"+{country_code}{nsn}", None)
    groups = phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL).split(" ", 1)[1]
    spaced = re.sub(r"[^0-9]+", " ", groups).strip()
    forms = [
        f"+{country_code}{nsn}",
        f"+{country_code} {groups}",
        f"00{country_code} {spaced}",
        f"+{country_code}-{spaced.replace(' ', '-')}",
        f"+{country_code} (0){spaced}",
        f"+{country_code}.{spaced.replace(' ', '.')}",
        f" +{country_code}\u00a0{spaced} ",
    ]
    if german:
        national = phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL)
        # Where no national format fits, libphonenumber writes the bare digits: people dial the 0.
        national = national if national.startswith("0") else "0" + national
        area, _, rest = national.partition(" ")
        forms += [
            f"0{nsn}", national, national, f"{area}/{rest}", f"({area}) {rest}",
            f"{area}-{rest.replace(' ', '-')}", f"{area}.{rest.replace(' ', '')}", f"+49 0{nsn}",
        ]
    return rng.choice(forms)


def random_numbers(rng, region, types, count, prefixes=None, tries=40000, bucket=None):
    """Valid national numbers of the given types, made by filling the type's patterns' digits
    at random after a prefix (a type's example number's first digits, or the given ones)."""
    metadata = PhoneMetadata.metadata_for_region(region)
    found, seen, buckets = [], set(), {}
    candidates = []
    for number_type in sorted(types & set(TYPE_ATTRIBUTES)):
        description = getattr(metadata, TYPE_ATTRIBUTES[number_type])
        if description is None or description.example_number is None:
            continue
        example = description.example_number
        starts = prefixes or [example[:k] for k in range(1, min(4, len(example)) + 1)]
        candidates.append((number_type, description, starts))
    if not candidates:
        return []
    per_bucket = None
    for _ in range(tries):
        if len(found) >= count:
            break
        number_type, description, starts = rng.choice(candidates)
        start = rng.choice(starts)
        length = rng.choice([n for n in description.possible_length if n > len(start)] or [len(start) + 1])
        nsn = start + "".join(rng.choice("0123456789") for _ in range(length - len(start)))
        if nsn in seen:
            continue
        seen.add(nsn)
        number = phonenumbers.parse(f"+{metadata.country_code}{nsn}", None)
        if (not phonenumbers.is_valid_number(number) or phonenumbers.number_type(number) not in types
                or phonenumbers.region_code_for_number(number) != region):
            continue
        if bucket:
            key = bucket(number)
            per_bucket = per_bucket or max(1, count // 4)
            if buckets.get(key, 0) >= per_bucket:
                continue
            buckets[key] = buckets.get(key, 0) + 1
        found.append(nsn)
    return found


def area_code_length(number):
    return len(phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL).split(" ")[1])


def rows():
    if phonenumbers.__version__ != PINNED_VERSION:
        sys.exit(f"phonenumbers {PINNED_VERSION} expected (scripts/install-deps.sh), found {phonenumbers.__version__}")
    rng = random.Random(SEED)
    inputs = []

    def german(nsns):
        inputs.extend(written(rng, 49, nsn, german=True) for nsn in nsns)

    T = PhoneNumberType
    # German fixed-line, area codes of 2 to 5 digits (030, 0221, 06021, 033056), and 032.
    german(random_numbers(rng, "DE", {T.FIXED_LINE}, 300, prefixes=list("2345689"), bucket=area_code_length))
    german(random_numbers(rng, "DE", {T.FIXED_LINE}, 30, prefixes=["32"]))
    german(random_numbers(rng, "DE", {T.MOBILE}, 300, prefixes=["15", "16", "17"]))
    german(random_numbers(rng, "DE", {T.PREMIUM_RATE}, 200, prefixes=["900", "1377", "1378", "1379"]))
    german(random_numbers(rng, "DE", {T.PREMIUM_RATE, T.SHARED_COST}, 200, prefixes=["137", "138"]))
    german(random_numbers(rng, "DE", {T.SHARED_COST}, 200, prefixes=["180"]))
    german(random_numbers(rng, "DE", {T.PERSONAL_NUMBER}, 200, prefixes=["700"]))
    german(random_numbers(rng, "DE", {T.TOLL_FREE}, 200, prefixes=["800"]))
    german(random_numbers(rng, "DE", {T.PAGER}, 100))
    german(random_numbers(rng, "DE", {T.UAN}, 100))
    german(random_numbers(rng, "DE", {T.VOICEMAIL}, 100))
    # Withdrawn 0190 and the 118xx directory services: not numbers libphonenumber knows.
    for _ in range(100):
        inputs.append(rng.choice(["0190 ", "+49 190 ", "0190/", "0049 190 "])
                      + "".join(rng.choice("0123456789") for _ in range(rng.randint(4, 8))))
    for _ in range(100):
        inputs.append(rng.choice(["118", "0118", "0118 ", "+49 118 ", "+49118"])
                      + "".join(rng.choice("0123456789") for _ in range(rng.randint(2, 4))))
    # Foreign numbers of every type their region has, shared country codes included.
    every_type = set(TYPE_ATTRIBUTES) | {T.FIXED_LINE_OR_MOBILE}
    for region in FOREIGN:
        code = PhoneMetadata.metadata_for_region(region).country_code
        for nsn in random_numbers(rng, region, every_type, 25):
            inputs.append(written(rng, code, nsn, german=False))
    for code in NON_GEOGRAPHIC:
        metadata = PhoneMetadata.metadata_for_nongeo_region(code)
        for attribute in TYPE_ATTRIBUTES.values():
            description = getattr(metadata, attribute)
            if description is not None and description.example_number:
                inputs.append(written(rng, code, description.example_number, german=False))
    # Unassigned country codes, and numbers cut short or made too long.
    for code in ["999", "998", "990", "969", "888 0", "801", "0"]:
        for _ in range(15):
            inputs.append(rng.choice(["+", "00"]) + code + " " + "".join(rng.choice("0123456789") for _ in range(rng.randint(6, 10))))
    valid = [text for text in inputs if expected(text)[1] != "invalid"]
    for text in rng.sample(valid, 300):
        digits = re.sub(r"[^0-9+]", "", text)
        cut = rng.choice([digits[:rng.randint(2, 6)], digits + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 9)))])
        inputs.append(cut[:40])
    inputs += ["", "+", "0", "+49", "0049", "+49 30", "030 12", "abc", "030 12x4567", "+49 30 1234567 ext 5", "++49 30 1234567",
               "49 30 1234567", "301234567", "000 49 30 1234567", "+49 30 1234567" + " " * 30, "0" * 41]
    result, seen = [], set()
    for text in inputs:
        if text in seen or "\t" in text:
            continue
        seen.add(text)
        row = expected(text)
        # The rows test what the portal must agree on with libphonenumber; other forms (letters,
        # extensions, a number without 0 or +) the portal refuses: only those libphonenumber refuses too.
        if (len(text.strip()) > 40 or not ACCEPTED_FORM.match(text.strip())) and row[1] != "invalid":
            continue
        result.append(row)
    return result


def render():
    lines = [
        "# Phone numbers as typed on the call page, with libphonenumber's verdict (Google, Apache License 2.0),",
        f"# GENERATED by scripts/phone-metadata/fixture.py from the PyPI package phonenumbers {PINNED_VERSION}"
        f" (seed {SEED}). Do not edit by hand.",
        "# accepted: by the default --callback-numbers (DE: German fixed-line and mobile numbers).",
        "input\te164\tregion\ttype\tinternational\taccepted\tmasked",
    ]
    lines += ["\t".join(row) for row in rows()]
    return "\n".join(lines) + "\n"


def main():
    text = render()
    if "--check" in sys.argv[1:]:
        if OUTPUT.read_text() != text:
            sys.exit(f"{OUTPUT.relative_to(ROOT)} differs from what scripts/phone-metadata/fixture.py writes")
        return
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({text.count(chr(10)) - 4} numbers)")


if __name__ == "__main__":
    main()
