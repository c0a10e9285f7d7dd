"""Helpers of the form fuzz (Tests/fuzz): a plain HTTP client that sends exactly the bytes it is
given (no re-encoding of the target or the body, cookies kept like a browser), the portal's
texts read from the Swift string tables, the check every response must pass, the portal's route
table read from the Swift sources, and the hypothesis strategies of form values, bodies, query
strings and path segments.

Imported by conftest.py and test_portal_forms.py (pytest puts this directory on sys.path)."""

from __future__ import annotations

import html
import http.client
import json
import os
import re
import socket
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, quote_plus

from hypothesis import strategies as st

from support.processes_and_browsers import PortalProcess

REPO = Path(__file__).resolve().parents[2]

PORTAL_BIN = os.environ.get("PORTAL_BIN") or str(REPO / ".build" / "debug" / "portal")
PAM_SERVICE = "teletan-portal-test"

ACCOUNTS = {
    "officer": ("tt-officer", "Officer-Pass-1"),
    "hotline": ("tt-hotline", "Hotline-Pass-1"),
    "event": ("tt-event", "Event-Pass-1"),
    "event2": ("tt-event2", "Event-Pass-2"),
    "admin": ("tt-admin", "Admin-Pass-1"),
    # Signed out again and again by the sign-out fuzz.
    "leaver": ("tt-officer", "Officer-Pass-1"),
    # Whose sessions the admin's End session fuzz ends.
    "victim": ("tt-hotline2", "Hotline-Pass-2"),
}
# An account with an expired password: its sign-in asks for a new one (a waiting PAM
# conversation for /signin/continue). The fuzz never sends two equal new passwords, so the
# password stays as it is.
PASSWORD_CHANGE = ("tt-pwchange", "Change-Pass-1")

# Generated requests sent per test and the statuses they got, printed at the end of the run (the
# fuzz is not vacuous: valid values reach the handlers, which answer 2xx and 3xx too).
SENT: Counter = Counter()
STATUSES: defaultdict[str, Counter] = defaultdict(Counter)

# ---------------------------------------------------------------------------------------------
# The portal's texts (Sources/*/…Strings.swift), to tell a localised page from any other


def _swift_unescape(text: str) -> str:
    def replace(match: re.Match) -> str:
        escaped = match.group(1)
        if escaped.startswith("u{"):
            return chr(int(escaped[2:-1], 16))
        return {"n": "\n", "t": "\t", "r": "\r", "0": "\0", '"': '"', "'": "'", "\\": "\\"}[escaped]
    return re.sub(r"\\(u\{[0-9a-fA-F]+\}|.)", replace, text)


@dataclass
class Texts:
    """One language's texts: every value, and the ones with {placeholders} as patterns."""
    values: dict[str, str]
    literals: set[str] = field(default_factory=set)
    patterns: list[re.Pattern] = field(default_factory=list)

    def __post_init__(self):
        for value in self.values.values():
            if re.search(r"\{[a-z_]+\}", value):
                self.patterns.append(re.compile(
                    "".join(".+?" if re.fullmatch(r"\{[a-z_]+\}", part) else re.escape(part)
                            for part in re.split(r"(\{[a-z_]+\})", value)), re.S))
            else:
                self.literals.add(value)

    def has(self, shown: str) -> bool:
        """Whether `shown` is one of these texts (a text with placeholders filled in counts)."""
        return shown in self.literals or any(pattern.fullmatch(shown) for pattern in self.patterns)


def load_texts() -> dict[str, Texts]:
    """{"en": Texts, "de": Texts} of every StringTable(english: [...], german: [...]) in Sources."""
    tables: dict[str, dict[str, str]] = {"en": {}, "de": {}}
    files = sorted((REPO / "Sources").rglob("*Strings.swift"))
    for path in files:
        source = path.read_text()
        for match in re.finditer(r"StringTable\(english: \[(.*?)\n\s*\], german: \[(.*?)\n\s*\]\)", source, re.S):
            for language, block in (("en", match.group(1)), ("de", match.group(2))):
                for key, value in re.findall(r'^\s*"([A-Za-z0-9_.]+)"\s*:\s*"((?:[^"\\]|\\.)*)",?\s*$', block, re.M):
                    tables[language][key] = _swift_unescape(value)
    assert len(files) >= 5 and len(tables["en"]) > 300 and tables["en"].keys() == tables["de"].keys(), \
        f"the string tables were not read as expected: {len(files)} files, {len(tables['en'])} English texts"
    return {language: Texts(values) for language, values in tables.items()}


# ---------------------------------------------------------------------------------------------
# The portal process


class FuzzPortal(PortalProcess):
    """`portal serve` with the limits out of the way of a fuzz: no minimum interval between two
    teleTANs, high daily and hourly limits, sign-in throttling only after very many failures."""

    def __init__(self, workdir: Path, extra_arguments: list[str] | None = None):
        super().__init__(workdir, PORTAL_BIN, PAM_SERVICE, extra_arguments=extra_arguments)

    def settings(self) -> list[str]:
        return [
            "--teletan-interval", "0s",
            "--teletans-per-user-per-day", "1000000",
            "--teletans-per-hour", "1000000",
            "--daily-quota", "1000000",
            "--signin-failures-per-user", "1000",
            "--signin-failures-per-address", "100000",
            # Hundreds of failed sign-ins: without their 1 s floor (Tests/security measures it).
            "--signin-failure-time", "0s",
            # The /signin/continue fuzz leaves PAM conversations waiting (cancelling or failing
            # one costs pam_unix's 2 s failure delay): enough threads for them, and a short wait.
            "--pam-threads", "256",
            "--pam-timeout", "5s",
            "--health-authorities", str(REPO / "docs" / "health-authorities.example.csv"),
            "--hotline-checks", str(REPO / "docs" / "hotline-checks.example.json"),
            "--callback-retention", "1h",
        ]

    def client(self, name: str, role: str | None = None) -> Client:
        """A browser of its own; signed in as `role` (a key of ACCOUNTS) if given."""
        client = Client(self.port, name)
        if role is not None:
            client.sign_in(*ACCOUNTS[role])
        return client


# ---------------------------------------------------------------------------------------------
# HTTP


@dataclass
class Sent:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes | None

    def describe(self) -> str:
        body = "(no body)" if self.body is None else f"({len(self.body)} bytes) {self.body[:400]!r}{'...' if len(self.body) > 400 else ''}"
        headers = {name: value for name, value in self.headers.items() if name != "Cookie"}
        return f"{self.method} {self.target[:600]}\n  headers: {headers}\n  body: {body}"


@dataclass
class Received:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key.lower() == name.lower()), None)

    @property
    def location(self) -> str:
        return self.header("Location") or ""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class PortalGone(AssertionError):
    """The portal did not answer (it crashed, or closed the connection without a response)."""


class Client:
    """One browser, as far as the portal can tell: its own cookies (path-scoped, kept from every
    answer like a browser keeps them, the language cookie excepted so that Accept-Language keeps
    choosing the language), a fresh connection per request, and the exact target and body bytes
    it is given."""

    def __init__(self, port: int, name: str):
        self.port = port
        self.name = name
        self.cookies: dict[str, tuple[str, str]] = {}  # name -> (value, path)
        self.csrf: str | None = None  # the signed-in user's token (from the pages' forms)
        self.credentials: tuple[str, str] | None = None
        self.signed_out = False

    def cookie_header(self, path: str) -> str:
        return "; ".join(f"{name}={value}" for name, (value, cookie_path) in self.cookies.items()
                         if path == cookie_path or path.startswith(cookie_path.rstrip("/") + "/") or cookie_path == "/")

    def send(self, method: str, target: str, body: bytes | None = None, headers: dict[str, str] | None = None,
             lang: str = "en", cookies: bool = True) -> tuple[Sent, Received]:
        all_headers = {"Accept-Language": lang}
        if cookies and (cookie := self.cookie_header(target.split("?", 1)[0])):
            all_headers["Cookie"] = cookie
        all_headers.update(headers or {})
        sent = Sent(method, target, all_headers, body)
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.putrequest(method, target, skip_host="Host" in all_headers, skip_accept_encoding=True)
            for name, value in all_headers.items():
                connection.putheader(name, value.encode("latin-1") if isinstance(value, str) else value)
            if body is not None:
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            response = connection.getresponse()
            received = Received(response.status, response.getheaders(), response.read())
        except (ConnectionError, http.client.HTTPException, socket.timeout, OSError) as error:
            raise PortalGone(f"no answer ({error!r}) to\n{sent.describe()}") from None
        finally:
            connection.close()
        for name, value in received.headers:
            if name.lower() == "set-cookie":
                self._keep_cookie(value)
        return sent, received

    def _keep_cookie(self, header: str) -> None:
        first, *attributes = [part.strip() for part in header.split(";")]
        name, _, value = first.partition("=")
        if name == "portal_lang":
            return
        path = "/"
        expired = value == ""
        for attribute in attributes:
            key, _, argument = attribute.partition("=")
            if key.lower() == "path":
                path = argument or "/"
            elif key.lower() == "max-age" and argument.strip() in ("0", "-1"):
                expired = True
        if expired:
            self.cookies.pop(name, None)
        else:
            self.cookies[name] = (value, path)

    def get(self, target: str, lang: str = "en") -> Received:
        return self.send("GET", target, lang=lang)[1]

    def post_form(self, target: str, fields: list[tuple[str, str]] | dict[str, str], lang: str = "en") -> Received:
        pairs = list(fields.items()) if isinstance(fields, dict) else fields
        body = "&".join(f"{quote_plus(name)}={quote_plus(value)}" for name, value in pairs).encode()
        return self.send("POST", target, body, {"Content-Type": "application/x-www-form-urlencoded"}, lang=lang)[1]

    # Sign-in as a browser does it

    def sign_in(self, username: str, password: str) -> None:
        self.cookies.clear()
        page = self.get("/signin")
        csrf = hidden_value(page.text, "/signin", "csrf")
        answer = self.post_form("/signin", {"csrf": csrf, "username": username, "password": password})
        # The start page, or for a hotline agent the hotline page or their open call.
        assert answer.status == 303 and re.fullmatch(r"/(hotline(/calls/[0-9a-f-]{36})?)?", answer.location or ""), (
            username, answer.status, answer.text[:500])
        self.credentials = (username, password)
        self.signed_out = False
        home = self.get("/")
        assert home.status == 200, (username, home.status)
        self.csrf = hidden_value(home.text, "/signout", "csrf")

    def ensure_signed_in(self) -> None:
        if self.credentials and (self.signed_out or "portal_session" not in self.cookies):
            self.sign_in(*self.credentials)

    def notice(self, received: Received) -> None:
        """Takes note of what an answer did to this browser: signed out, or sent to the sign-in."""
        if self.credentials and received.status in (302, 303) and received.location.startswith("/signin"):
            self.signed_out = True


# ---------------------------------------------------------------------------------------------
# Pages: forms, and the check of every answer


class _Forms(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms: list[tuple[str, dict[str, str]]] = []
        self._current: tuple[str, dict[str, str]] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self._current = (attributes.get("action") or "", {})
            self.forms.append(self._current)
        elif tag == "input" and self._current is not None and attributes.get("type") == "hidden" and attributes.get("name"):
            self._current[1][attributes["name"]] = attributes.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self._current = None


def forms(page: str) -> list[tuple[str, dict[str, str]]]:
    """(action, hidden inputs) of every form on the page."""
    parser = _Forms()
    parser.feed(page)
    return parser.forms


def hidden_value(page: str, action: str, name: str) -> str:
    for form_action, hidden in forms(page):
        if form_action == action and name in hidden:
            return hidden[name]
    raise AssertionError(f"no form {action} with {name} on the page:\n{page[:3000]}")


def actions(page: str, pattern: str) -> list[re.Match]:
    """The form actions on the page that match `pattern` (fully)."""
    return [match for action, _ in forms(page) if (match := re.fullmatch(pattern, action))]


STACK_TRACE_MARKERS = ("Fatal error", "Swift runtime failure", "Traceback", "Stack trace", "Backtrace", ".swift:", "#0 0x")


def problems_with(received: Received, lang: str, texts: dict[str, Texts]) -> list[str]:
    """What is wrong with an answer to a request in `lang`: a 5xx; a redirect that is not to a
    page of this site; a 4xx that is not an HTML page of the portal in `lang` with its localised
    title (for the error page: the status's own title and one of the portal's messages); an HTML
    page in the wrong language; an empty body or a stack trace."""
    status = received.status
    if status >= 500:
        return [f"server error {status}"]
    problems = []
    if 300 <= status < 400:
        location = received.location
        if not location.startswith("/") or location.startswith("//") or "\\" in location:
            problems.append(f"redirect to {location!r}, not a page of this site")
        return problems
    content_type = (received.header("Content-Type") or "").split(";")[0].strip()
    if status < 400 and content_type != "text/html":
        return problems  # health checks, exports, static files
    if not received.body:
        return [f"{status} with an empty body"]
    if content_type != "text/html":
        return [f"{status} is not an HTML page (Content-Type {content_type!r})"]
    try:
        page = received.body.decode("utf-8")
    except UnicodeDecodeError:
        return [f"{status} page is not UTF-8"]
    language = re.search(r'<html lang="([^"]*)">', page)
    if language is None or language.group(1) != lang:
        problems.append(f"page in {language.group(1) if language else 'no language'!r}, asked for {lang!r}")
    title = re.search(r"<title>(.*?)</title>", page, re.S)
    suffix = " - " + texts[lang].values["app_name"]
    shown = html.unescape(title.group(1)) if title else None
    if shown is None or not shown.endswith(suffix) or not texts[lang].has(shown[: -len(suffix)]):
        problems.append(f"title {shown!r} is not one of the portal's {lang!r} titles")
    if 'id="error-message"' in page:
        heading = re.search(r"<h1>(.*?)</h1>", page, re.S)
        expected = texts[lang].values.get(f"error_{status}_title")
        if heading is None or html.unescape(heading.group(1)) != expected:
            problems.append(f"error page heading {heading and heading.group(1)!r}, expected {expected!r}")
        message = re.search(r'<p id="error-message" class="error">(.*?)</p>', page, re.S)
        if message is None or not texts[lang].has(html.unescape(message.group(1))):
            problems.append(f"error message {message and message.group(1)!r} is not one of the portal's {lang!r} texts")
    elif status >= 400 and f"error_{status}_title" in texts[lang].values and status not in (400, 401, 403, 409, 422):
        # 404, 405, 413, 421, 429 only ever come as the error page.
        problems.append(f"a {status} that is not the error page")
    for marker in STACK_TRACE_MARKERS:
        if marker in page:
            problems.append(f"the page shows {marker!r}")
    return problems


# ---------------------------------------------------------------------------------------------
# The route table, read from the Swift sources (DeclaredRoutes groups and their routes)

FEATURE_SOURCES = ["SignIn", "Issuance", "Hotline", "AuditReview", "PortalWeb"]


def _join(prefix: str, path: str) -> str:
    parts = [part for part in (prefix + "/" + path).split("/") if part]
    return "/" + "/".join(re.sub(r"^:(\w+)$", r"{\1}", part) for part in parts)


def declared_routes() -> set[tuple[str, str]]:
    """(method, path) of every route the features declare, `:name` written as `{name}`."""
    routes = set()
    method_call = r'\.(get|post|put|patch|delete|head)\((?:"([^"]*)")?'
    for feature in FEATURE_SOURCES:
        for path in (REPO / "Sources" / feature).rglob("*.swift"):
            source = path.read_text()
            # routes.group("/prefix", access: ...) followed by chained .get(...)/.post(...) lines
            for group in re.finditer(r'routes\.group\((?:"([^"]*)",\s*)?access:[^\n]*\n((?:\s*' + method_call + r'[^\n]*\n)+)',
                                     source):
                for method, sub in re.findall(method_call, group.group(2)):
                    routes.add((method.upper(), _join(group.group(1) or "", sub)))
            # let name = routes.group(...) and then name.get("...")
            for variable in re.finditer(r'let (\w+) = routes\.group\((?:"([^"]*)",\s*)?access:', source):
                for method, sub in re.findall(r"\b" + variable.group(1) + method_call, source):
                    routes.add((method.upper(), _join(variable.group(2) or "", sub)))
    return routes


# ---------------------------------------------------------------------------------------------
# Strategies


class Valid:
    """Stands for the valid value of a field (a CSRF token, a nonce, an id), filled in when the
    request is made: the strategies are the same every run, the tokens are not."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"<valid {self.name}>"


INT64_MAX = 2 ** 63 - 1
SPECIAL_VALUES = [
    "", " ", "  \t ", "\x00", "a\x00b", "\r\n", "\u202e", "\ufeff", "\u200b", "\u00ad", "\U000e0041", "\ud7ff",
    "0", "-0", "+1", "-1", "1e309", "NaN", "Infinity", "0x10", "00000000001",
    str(INT64_MAX), str(INT64_MAX + 1), str(-INT64_MAX - 1), str(2 ** 64 - 1), str(2 ** 64), "99999999999999999999999999",
    "true", "null", "[]", "{}", "<script>alert(1)</script>", "\"'><img src=x>", "' OR '1'='1", "%00", "%", "%zz", "+",
    "&", "=", "../../../etc/passwd", "..", "/", "//evil.example", "https://evil.example/", "\\\\evil", "{{t.app_name}}",
    "{wait}", "ä", "ß", "İ", "ﬀ", "e\u0301", "👩‍⚕️", "𝄞", "\U0010ffff", "Ⅻ", "٣", "１２３", "\x7f", "\x1b[31m",
    "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "FE9A5MAK6C", "fe9a5mak6c", "FE9A-5MAK-6C",
    "2026-11-24", "2026-02-30", "2026-11-24T25:00", "9999-12-31T23:59:59", "1970-01-01", "0000-00-00", "2026-11-24T10:00:00Z",
]


def long_values() -> st.SearchStrategy[str]:
    """Long values: one unit repeated, up to and past the 16 KiB body limit once encoded."""
    units = ["a", "ä", "€", "𝄞", "e\u0301", "\u0301", "\x00", "%", " ", "0", "&", "Ab1-"]
    return st.builds(lambda unit, count: unit * count, st.sampled_from(units), st.integers(100, 6000))


# Numbers at the edges of the integer types a server parses into.
BOUNDARY_NUMBERS = [str(n) for n in (0, -1, 1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53 + 1, INT64_MAX - 1, INT64_MAX,
                                     INT64_MAX + 1, -INT64_MAX - 1, -INT64_MAX - 2, 2 ** 64 - 1, 2 ** 64)]


def values() -> st.SearchStrategy[str]:
    """Any value a form field or query parameter might get: text of every kind (control
    characters and NUL included), numbers (at the edges of the integer types too), special and
    long values."""
    return st.one_of(
        st.text(max_size=30),
        st.sampled_from(SPECIAL_VALUES),
        st.sampled_from(BOUNDARY_NUMBERS),
        st.integers(min_value=-(2 ** 70), max_value=2 ** 70).map(str),
        st.floats().map(repr),
        long_values(),
    )


@st.composite
def weighted(draw, percent: int, likely: st.SearchStrategy, otherwise: st.SearchStrategy):
    """`likely` in about `percent` % of the draws, else `otherwise` (one_of would flatten nested
    one_ofs into equally likely branches, and a valid value would become rare)."""
    return draw(likely) if draw(st.integers(0, 99)) < percent else draw(otherwise)


def field_value(plausible: list | tuple = (), percent: int = 55) -> st.SearchStrategy:
    """A field's value: mostly a plausible one (a Valid marker, or a constant that means
    something to the portal), else any value."""
    choices = list(plausible)
    if not choices:
        return values()
    return weighted(percent, st.sampled_from(choices), values())


KEY_NAMES = st.one_of(st.text(max_size=12), st.sampled_from(["csrf", "nonce", "id", "a[]", "a[b]", "[]", "[", "]", "a[0]", "a[-1]",
                                                            f"a[{INT64_MAX}]", "a[][]", "a.b", "__proto__", "constructor"]))
BROKEN_FRAGMENTS = ["%", "%z", "%zz", "%C3%28", "%FF%FE", "%E2%82", "%00", "%%", "&", "&&", "=", "==", "=&=", "[]", "[", "]",
                    "a[b", "a]=1", "[]=1", "x[][]=1", "x[0]=1&x[]=2", "x[0]=1&x=2", f"x[{2 ** 64}]=1", "x[9999999]=1",
                    "+", "++=++", ";", "a=1;b=2", "\u00e4=\u00e4", "%u00e4"]


def _encode(text: str, mode: str, safe: str = "") -> str:
    if mode == "plus":
        return quote_plus(text, safe=safe)
    if mode == "percent":
        return quote(text, safe=safe)
    return text  # raw: only for bodies (bytes), never for a request target


@st.composite
def form_pairs(draw, fields: dict[str, st.SearchStrategy]) -> list[tuple[str, object]]:
    """The fields of a form: each known field present (with its valid value, plausible or
    fuzzed), missing, or repeated; bracketed ("name[]") now and then; extra fields; any order."""
    pairs: list[tuple[str, object]] = []
    for name, strategy in fields.items():
        # The CSRF token is nearly always there: without it nothing else is looked at.
        presence = draw(st.sampled_from(["once"] * (18 if name == "csrf" else 6) + ["missing", "repeated", "bracketed"]))
        if presence == "missing":
            continue
        key = name + draw(st.sampled_from(["[]", "[0]", "[x]"])) if presence == "bracketed" and not name.endswith("]") else name
        for _ in range(2 if presence == "repeated" else 1):
            value = draw(strategy)
            if value is None:  # the field's strategy left it out
                continue
            # A list is an array field ("checks[]"): one pair per element.
            pairs += [(key, element) for element in value] if isinstance(value, list) else [(key, value)]
    pairs += draw(st.lists(st.tuples(KEY_NAMES, values()), max_size=3))
    return draw(st.permutations(pairs)) if len(pairs) > 1 and draw(st.booleans()) else pairs


FORM = "application/x-www-form-urlencoded"
CONTENT_TYPES = [FORM] * 10 + [
    FORM + "; charset=utf-8", FORM + "; charset=iso-8859-1", "application/x-www-form-urlencoded;;;", "APPLICATION/X-WWW-FORM-URLENCODED",
    "multipart/form-data; boundary=fuzz", "multipart/form-data", "application/json", "text/plain", "text/html", "application/xml",
    "application/octet-stream", "", "*/*", "x", "application/x-www-form-urlencodedx", None,
]


@dataclass
class DrawnBody:
    """A body as drawn: how it is made (`mode`), the pairs with Valid markers still in them, and
    its content type; `render` fills in the valid values and gives the bytes."""
    mode: str
    pairs: list[tuple[str, object]]
    content_type: str | None
    encoding: str = "plus"
    fragments: list[tuple[int, str]] = field(default_factory=list)
    raw: bytes = b""

    def valid_names(self) -> set[str]:
        return {value.name for _, value in self.pairs if isinstance(value, Valid)}

    def render(self, valid: dict[str, str]) -> bytes | None:
        pairs = [(key, valid.get(value.name, "") if isinstance(value, Valid) else value) for key, value in self.pairs]
        if self.mode == "none":
            return None
        if self.mode == "binary":
            prefix = "&".join(f"{quote_plus(k)}={quote_plus(v)}" for k, v in pairs).encode()
            return prefix + self.raw
        if self.mode == "json":
            return json.dumps(dict(pairs), ensure_ascii=self.encoding == "plus").encode()
        if self.mode == "multipart":
            parts = [f'--fuzz\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n' for k, v in pairs]
            return ("".join(parts) + "--fuzz--\r\n").encode("utf-8", errors="surrogatepass")
        texts = [f"{_encode(k, self.encoding)}={_encode(v, self.encoding)}" for k, v in pairs]
        for position, fragment in self.fragments:
            texts.insert(position % (len(texts) + 1), fragment)
        return "&".join(texts).encode("utf-8", errors="surrogatepass")


@st.composite
def bodies(draw, fields: dict[str, st.SearchStrategy]) -> DrawnBody:
    """A form body: mostly urlencoded (percent, plus or raw UTF-8), now and then with broken
    encoding (bad escapes, invalid UTF-8, stray separators and brackets), as JSON or multipart,
    binary, empty or absent; with a content type that is mostly the form's."""
    mode = draw(st.sampled_from(["form"] * 12 + ["broken"] * 3 + ["json", "multipart", "binary", "empty", "none"]))
    pairs = draw(form_pairs(fields))
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    body = DrawnBody(mode="form" if mode in ("broken", "empty") else mode, pairs=[] if mode == "empty" else pairs,
                     content_type=content_type, encoding=draw(st.sampled_from(["plus", "plus", "percent", "raw"])))
    if mode == "json":
        body.content_type = draw(st.sampled_from(["application/json", FORM]))
    elif mode == "multipart":
        body.content_type = draw(st.sampled_from(["multipart/form-data; boundary=fuzz", FORM]))
    elif mode == "binary":
        body.raw = draw(st.binary(max_size=200))
    elif mode == "broken":
        body.fragments = draw(st.lists(st.tuples(st.integers(0, 8), st.sampled_from(BROKEN_FRAGMENTS)), min_size=1, max_size=3))
    return body


QUERY_SAFE = ["", "", "/", "=&", "[]", "/?:@!$'()*,;", "\"<>{}|^`"]


@st.composite
def queries(draw, fields: dict[str, st.SearchStrategy]) -> str:
    """A query string ("" or "?..."): the page's parameters (`fields`: name -> values) and random
    ones, repeated now and then, plausible and fuzzed values, percent- or plus-encoded with
    varying safe characters, and now and then broken escapes or stray separators. Always
    printable ASCII (what a browser sends)."""
    if draw(st.integers(0, 9)) == 0:
        return ""
    names = list(fields)
    # Half of the queries are well-formed (each name once, no broken pieces), so that the values
    # reach the page's own checks; the other half are anything.
    clean = draw(st.booleans())
    if names and clean:
        items = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    else:
        name_strategy = weighted(70, st.sampled_from(names), KEY_NAMES) if names else KEY_NAMES
        items = draw(st.lists(name_strategy, max_size=6))
    encoding = draw(st.sampled_from(["plus", "percent"]))
    safe = "" if clean else draw(st.sampled_from(QUERY_SAFE))
    texts = []
    for name in items:
        value = draw(fields.get(name, values()))
        if not clean and draw(st.integers(0, 9)) == 0:
            texts.append(_encode(name, encoding))  # a name without "="
        else:
            texts.append(f"{_encode(name, encoding)}={_encode(value, encoding, safe)}")
    if not clean:
        for position, fragment in draw(st.lists(st.tuples(st.integers(0, 6), st.sampled_from(BROKEN_FRAGMENTS)), max_size=2)):
            texts.insert(position % (len(texts) + 1), quote(fragment, safe="%&=[];+") if not fragment.isascii() else fragment)
    query = "&".join(texts) if clean else draw(st.sampled_from(["&", "&", ";"])).join(texts)
    return "?" + query if query or draw(st.booleans()) else ""


def segments(plausible: list | tuple = ()) -> st.SearchStrategy:
    """A path segment (percent-encoded as needed): the valid one, plausible ones, UUIDs in any
    case, numbers at the edges, hex, dots and encoded slashes, long ones, any text."""
    any_text = st.one_of(
        st.uuids().map(str), st.uuids().map(lambda u: str(u).upper()), st.uuids().map(lambda u: u.hex),
        st.integers(min_value=-(2 ** 65), max_value=2 ** 65).map(str),
        st.sampled_from([str(INT64_MAX), str(INT64_MAX + 1), "0", "-1", "1", "01", "+1", "1e3", " 1", "0x1", "..", ".", "%2e%2e",
                         "%2F", "%2f..%2f", "%00", "%zz", "%", "a%2Fb", "~", "*", "de", "en", "DE", "fr", "de-DE", "", "%20"]),
        st.text(alphabet="0123456789abcdefABCDEF", min_size=60, max_size=66),
        st.text(max_size=40).map(lambda text: quote(text, safe="")),
        st.integers(100, 3000).map(lambda count: "a" * count),
    )
    # What is left of a space, a control character or a non-ASCII one goes percent-encoded
    # (as a browser sends it); "%" stays, so that broken escapes stay broken.
    fuzz = any_text.map(lambda text: quote(text, safe="%/:@!$&'()*+,;=~"))
    choices = list(plausible)
    return weighted(60, st.sampled_from(choices), fuzz) if choices else fuzz
