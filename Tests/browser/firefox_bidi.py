"""Debian's Firefox ESR, driven over WebDriver BiDi: the browser many German authorities use.

Why BiDi: Debian has no geckodriver package, but Firefox speaks the W3C WebDriver BiDi protocol
itself (`--remote-debugging-port`, a websocket at `/session`). This module is a small client on
top of `websocket-client` (the `websocket` module, which selenium already needs: no new
dependency). It offers the part of selenium's WebDriver interface the browser tests' helpers use
(`get`, `refresh`, `back`, `forward`, `current_url`, `page_source`, `execute_script`,
`find_element(s)` by id, name, tag or CSS selector, and elements with `text`, `click`,
`send_keys`, `clear`, `get_attribute`, `is_displayed`, `is_selected`, `is_enabled`), so that
the helpers of test_portal_browser.py and test_hotline_browser.py run unchanged in Firefox.

BiDi commands used: session.new, browsingContext.getTree / navigate / reload / traverseHistory /
setViewport, script.callFunction, input.performActions / releaseActions. No events are
subscribed to: every message on the websocket is an answer.

- **Reading the page**: script.callFunction in a *sandbox* realm (an isolated world that sees
  the DOM through Xray wrappers, not the page's own script globals). It works with
  `javascript.enabled=false` too: that pref stops the page's scripts, not the remote agent's
  evaluations (checked in the JavaScript-off test: portal.js never shows the copy button).
  `execute_script` runs in the page's own realm, as selenium's does (also with JavaScript
  off), so that a marker set on `window` (test_portal_browser.wait_for_new_document) vanishes
  with the document.
- **Clicking and typing**: input.performActions, a real pointer click at the element's centre
  and real key presses, so that a button submits its own form as a user's click does, with or
  without JavaScript. The viewport (1280 x 2400) holds the portal's pages without scrolling.
- **History**: browsingContext.traverseHistory returns once the traversal started; `back()` and
  `forward()` then wait until another document (BiDi's node id of <html> changes) is complete.
- **No outside network**: a fresh profile per browser whose user.js turns off updates, telemetry,
  remote settings, safe browsing, captive-portal and connectivity checks, prefetching and
  first-run pages; `MOZ_DISABLE_NONLOCAL_CONNECTIONS=1` (Mozilla's own test switch) refuses
  connections to anything but this machine; and every non-local request is sent to a proxy that
  is a trap (`ConnectionTrap`): `quit()` fails if anything reached it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import websocket
from selenium.common.exceptions import NoSuchElementException, WebDriverException
from selenium.webdriver.common.by import By

# Debian's package (scripts/install-deps.sh); FIREFOX_BIN picks another build.
FIREFOX = os.environ.get("FIREFOX_BIN", "firefox-esr")

# Everything that would reach out on its own, off (most also in Firefox's remote/shared/
# RecommendedPreferences.sys.mjs, which the remote agent applies only after start-up has begun).
QUIET_PREFERENCES: dict[str, object] = {
    "app.normandy.enabled": False,
    "app.normandy.api_url": "",
    "app.update.disabledForTesting": True,
    "app.update.auto": False,
    "browser.aboutwelcome.enabled": False,
    "browser.backup.enabled": False,
    "browser.discovery.enabled": False,
    "browser.ml.enable": False,
    "browser.newtabpage.enabled": False,
    "browser.newtabpage.activity-stream.feeds.section.topstories": False,
    "browser.newtabpage.activity-stream.feeds.system.topstories": False,
    "browser.newtabpage.activity-stream.testing.shouldInitializeFeeds": False,
    "browser.region.network.url": "",
    "browser.region.update.enabled": False,
    "browser.safebrowsing.blockedURIs.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.provider.google4.updateURL": "",
    "browser.safebrowsing.provider.mozilla.updateURL": "",
    "browser.search.update": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage": "about:blank",
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.tabs.warnOnClose": False,
    "browser.topsites.contile.enabled": False,
    "browser.translations.enable": False,
    "browser.urlbar.merino.endpointURL": "",
    "browser.urlbar.suggest.searches": False,
    "datareporting.healthreport.uploadEnabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.policy.dataSubmissionPolicyBypassNotification": True,
    "datareporting.usage.uploadEnabled": False,
    "dom.push.connection.enabled": False,
    "extensions.autoDisableScopes": 0,
    "extensions.blocklist.enabled": False,
    "extensions.enabledScopes": 5,
    "extensions.getAddons.cache.enabled": False,
    "extensions.systemAddon.update.enabled": False,
    "extensions.update.enabled": False,
    "geo.provider.network.url": "",
    "identity.fxaccounts.enabled": False,
    "media.gmp-manager.updateEnabled": False,
    "media.gmp-manager.url": "",
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "network.dns.disablePrefetch": True,
    "network.http.speculative-parallel-limit": 0,
    "network.predictor.enabled": False,
    "network.prefetch-next": False,
    "network.trr.mode": 5,  # no DNS over HTTPS
    "security.remote_settings.crlite_filters.enabled": False,
    "security.remote_settings.intermediates.enabled": False,
    # Honoured in a release build only with MOZ_DISABLE_NONLOCAL_CONNECTIONS=1 (set at start).
    "services.settings.server": "data:,#remote-settings-dummy/v1",
    "startup.homepage_welcome_url": "about:blank",
    "startup.homepage_welcome_url.additional": "",
    "termsofuse.bypassNotification": True,
    "toolkit.telemetry.archive.enabled": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.server": "",
    "toolkit.telemetry.unified": False,
    "trailhead.firstrun.didSeeAboutWelcome": True,
}

SESSION_STORE_INTERVAL = 1.0  # seconds between writes of the session store (Firefox's default: 15)

# As a user's Firefox behaves, where it matters for what the profile keeps (the secrets search
# reads the profile): English pages, the session store kept for a restore after a crash (the
# remote agent would turn that off), and written every second rather than every 15 s, so that a
# short test leaves what a long day at the phone would; no password manager (as in the Chromium
# tests).
USER_PREFERENCES: dict[str, object] = {
    "intl.accept_languages": "en-US, en",
    "browser.sessionstore.resume_from_crash": True,
    "browser.sessionstore.interval": int(SESSION_STORE_INTERVAL * 1000),
    "signon.rememberSignons": False,
    "signon.autofillForms": False,
    "extensions.formautofill.addresses.enabled": False,
    "extensions.formautofill.creditCards.enabled": False,
}


def firefox_available() -> bool:
    return shutil.which(FIREFOX) is not None


class BiDiError(WebDriverException):
    """An error answer of the browser (a WebDriverException, so that selenium's WebDriverWait,
    which the shared helpers use, retries while the browser is between documents)."""


class ConnectionTrap:
    """A listening socket on 127.0.0.1 that Firefox takes for its proxy: every request for a
    host that is not this machine ends here, is refused, and is remembered."""

    def __init__(self):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.port = self.socket.getsockname()[1]
        self.requests: list[str] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return  # closed
            with connection:
                connection.settimeout(2)
                try:
                    first_line = connection.recv(1024).split(b"\r\n")[0].decode(errors="replace")
                except OSError:
                    first_line = "(nothing sent)"
                self.requests.append(first_line)

    def close(self) -> None:
        self.socket.close()


class Element:
    """An element of the current document, by BiDi's shared id."""

    def __init__(self, browser: "Firefox", shared_id: str):
        self.browser = browser
        self.shared_id = shared_id

    def _call(self, function: str, *arguments):
        return self.browser._sandbox_call(function, self, *arguments)

    @property
    def text(self) -> str:
        """The rendered text, as selenium's: "" when hidden, white space collapsed per line."""
        return self._call("""(element) => {
            if (!element.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) return '';
            return element.innerText.split('\\n')
                .map(line => line.replace(/[ \\t\\u00a0]+/g, ' ').trim()).join('\\n').trim();
        }""")

    def get_attribute(self, name: str) -> str | None:
        """As selenium's: the property where there is one (an input's current value, a link's
        absolute href), else the attribute; booleans as "true" or None."""
        return self._call("""(element, name) => {
            if (name === 'class') return element.getAttribute('class');
            const property = element[name];
            if (typeof property === 'boolean') return property ? 'true' : null;
            if (property !== undefined && property !== null && typeof property !== 'object'
                && typeof property !== 'function') return String(property);
            return element.getAttribute(name);
        }""", name)

    def is_displayed(self) -> bool:
        return self._call("(element) => element.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})")

    def is_selected(self) -> bool:
        return self._call("(element) => Boolean(element.checked || element.selected)")

    def is_enabled(self) -> bool:
        return self._call("(element) => !element.disabled")

    def find_element(self, by: str, value: str) -> "Element":
        return self.browser._find(by, value, within=self, many=False)

    def find_elements(self, by: str, value: str) -> list["Element"]:
        return self.browser._find(by, value, within=self, many=True)

    def click(self) -> None:
        """A real pointer click at the element's centre. The click is dispatched where the
        compositor last painted the page, which can lag behind a scroll (one click in 15 was
        lost so): the viewport is tall enough for the portal's pages, and an element out of view
        is scrolled to and given time to be painted there."""
        scrolled = self._call("""(element) => {
            const box = element.getBoundingClientRect();
            if (box.top >= 0 && box.left >= 0 && box.bottom <= window.innerHeight && box.right <= window.innerWidth) {
                return false;
            }
            element.scrollIntoView({block: 'center', inline: 'center'});
            return true;
        }""")
        if scrolled:
            time.sleep(0.3)
        self.browser._perform([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
            {"type": "pointerMove", "x": 0, "y": 0, "origin": {"type": "element", "element": self._reference()}},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0},
        ]}])

    def clear(self) -> None:
        self._call("(element) => { element.value = ''; }")

    def send_keys(self, text: str) -> None:
        """Focuses the field (caret at the end) and types `text` key by key."""
        self._call("""(element) => {
            element.focus();
            if (typeof element.setSelectionRange === 'function') {
                element.setSelectionRange(element.value.length, element.value.length);
            }
        }""")
        keys = []
        for character in text:
            keys += [{"type": "keyDown", "value": character}, {"type": "keyUp", "value": character}]
        self.browser._perform([{"type": "key", "id": "keyboard", "actions": keys}])

    def _reference(self) -> dict:
        return {"sharedId": self.shared_id}


class Firefox:
    """One headless Firefox ESR with a fresh profile in `profile` (an empty directory; its log,
    firefox.log, is written there too, so that the secrets search reads it with the profile).
    `javascript=False` sets `javascript.enabled=false`: pages run no script at all."""

    def __init__(self, profile: Path, javascript: bool = True, width: int = 1280, height: int = 2400):
        self.profile = profile
        self.javascript = javascript
        self.trap = ConnectionTrap()
        self.log_path = profile / "firefox.log"
        self._write_preferences()
        self.process = self._launch()
        try:
            self.socket = websocket.create_connection(
                self._listening_address() + "/session", timeout=60,
                suppress_origin=True)  # Firefox refuses a websocket handshake with an Origin header
            self._next_id = 0
            self.command("session.new", {"capabilities": {"alwaysMatch": {"acceptInsecureCerts": False}}})
            self.context = self.command("browsingContext.getTree", {"maxDepth": 0})["contexts"][0]["context"]
            self.command("browsingContext.setViewport",
                         {"context": self.context, "viewport": {"width": width, "height": height}})
        except BaseException:
            self._stop_process()
            self.trap.close()
            raise

    # -- start and stop ----------------------------------------------------------------------

    def _write_preferences(self) -> None:
        preferences = {
            **QUIET_PREFERENCES,
            **USER_PREFERENCES,
            # Every host but this machine goes to the trap (127.0.0.1 itself is never proxied:
            # network.proxy.allow_hijacking_localhost stays false).
            "network.proxy.type": 1,
            "network.proxy.http": "127.0.0.1",
            "network.proxy.http_port": self.trap.port,
            "network.proxy.ssl": "127.0.0.1",
            "network.proxy.ssl_port": self.trap.port,
            "network.proxy.no_proxies_on": "",
            "javascript.enabled": self.javascript,
        }
        lines = [f"user_pref({json.dumps(name)}, {json.dumps(value)});" for name, value in preferences.items()]
        (self.profile / "user.js").write_text("\n".join(lines) + "\n")

    def _launch(self) -> subprocess.Popen:
        environment = {**os.environ, "MOZ_DISABLE_NONLOCAL_CONNECTIONS": "1", "MOZ_CRASHREPORTER_DISABLE": "1"}
        with open(self.log_path, "ab") as log:
            return subprocess.Popen(
                [FIREFOX, "--headless", "--no-remote", "--profile", str(self.profile),
                 "--remote-debugging-port=0", "about:blank"],  # port 0: Firefox picks a free one and says which
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=environment)

    def _listening_address(self, timeout: float = 60) -> str:
        """The websocket address from Firefox's log line "WebDriver BiDi listening on ws://...". """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.log_path.read_text(errors="replace").splitlines():
                if line.startswith("WebDriver BiDi listening on "):
                    return line.split()[-1]
            if self.process.poll() is not None:
                raise RuntimeError(f"Firefox exited with {self.process.returncode}:\n{self.log_tail()}")
            time.sleep(0.1)
        raise RuntimeError(f"Firefox did not open its WebDriver BiDi port within {timeout} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def quit(self) -> None:
        """Ends Firefox with SIGTERM, which leaves the profile as it is on disk while Firefox
        runs (the session store with the tab's history, kept for a restore after a crash):
        BiDi's browser.close would close the tab first and delete that file, leaving the secrets
        search less to read. Fails if Firefox tried to reach any other machine."""
        try:
            self.socket.close()
        finally:
            self._stop_process()
            self.trap.close()
        assert not self.trap.requests, f"Firefox tried to reach other machines: {sorted(set(self.trap.requests))}"

    def _stop_process(self) -> None:
        """SIGTERM (its content processes follow it), SIGKILL if it is still there after 30 s."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    # -- the protocol ------------------------------------------------------------------------

    def command(self, method: str, params: dict) -> dict:
        """Sends one command and returns its result (events are not subscribed to, so every
        message is an answer)."""
        self._next_id += 1
        self.socket.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") != self._next_id:
                continue
            if message.get("type") == "error":
                raise BiDiError(f"{method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def _perform(self, actions: list[dict]) -> None:
        self.command("input.performActions", {"context": self.context, "actions": actions})
        self.command("input.releaseActions", {"context": self.context})

    def _call_in(self, target: dict, function: str, *arguments):
        answer = self.command("script.callFunction", {
            "functionDeclaration": function,
            "arguments": [self._to_remote(argument) for argument in arguments],
            "target": target,
            "awaitPromise": False,
            "resultOwnership": "none",
        })
        if answer.get("type") == "exception":
            details = answer["exceptionDetails"]
            raise BiDiError(f"script error: {details.get('text')}")
        return self._from_remote(answer["result"])

    def _sandbox_call(self, function: str, *arguments):
        """Runs `function` in the tests' sandbox of the current document (isolated from the
        page's scripts, working with JavaScript off)."""
        return self._call_in({"context": self.context, "sandbox": "browser-tests"}, function, *arguments)

    def _to_remote(self, value) -> dict:
        if isinstance(value, Element):
            return value._reference()
        if value is None:
            return {"type": "null"}
        if isinstance(value, bool):
            return {"type": "boolean", "value": value}
        if isinstance(value, (int, float)):
            return {"type": "number", "value": value}
        if isinstance(value, str):
            return {"type": "string", "value": value}
        if isinstance(value, (list, tuple)):
            return {"type": "array", "value": [self._to_remote(item) for item in value]}
        raise TypeError(f"cannot pass {type(value).__name__} to the browser")

    def _from_remote(self, remote: dict):
        kind = remote["type"]
        if kind in ("undefined", "null"):
            return None
        if kind in ("string", "boolean"):
            return remote["value"]
        if kind == "number":
            value = remote["value"]
            return value if isinstance(value, (int, float)) else float(value)  # "NaN", "-0", ...
        if kind in ("array", "nodelist", "htmlcollection"):
            return [self._from_remote(item) for item in remote.get("value", [])]
        if kind == "object":
            return {key if isinstance(key, str) else json.dumps(key): self._from_remote(item)
                    for key, item in remote.get("value", [])}
        if kind == "node":
            return Element(self, remote["sharedId"])
        raise BiDiError(f"cannot read a {kind} from the browser")

    # -- selenium's interface, the part the helpers use --------------------------------------

    def get(self, url: str) -> None:
        self.command("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def refresh(self) -> None:
        self.command("browsingContext.reload", {"context": self.context, "wait": "complete"})

    def back(self) -> None:
        self._traverse(-1)

    def forward(self) -> None:
        self._traverse(1)

    def _traverse(self, delta: int, timeout: float = 30) -> None:
        before = self._document_id()
        self.command("browsingContext.traverseHistory", {"context": self.context, "delta": delta})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self._document_id(complete=True) not in (None, before):
                    return
            except WebDriverException:
                pass  # between documents
            time.sleep(0.05)
        raise BiDiError(f"no other document within {timeout} s of going {delta:+d} in history")

    def _document_id(self, complete: bool = False) -> str | None:
        """BiDi's id of the current document's <html> (None while it is loading, if `complete`)."""
        element = self._sandbox_call(
            "(complete) => (complete && document.readyState !== 'complete') ? null : document.documentElement", complete)
        return element.shared_id if element else None

    @property
    def current_url(self) -> str:
        return self.command("browsingContext.getTree", {"root": self.context, "maxDepth": 0})["contexts"][0]["url"]

    @property
    def page_source(self) -> str:
        return self._sandbox_call("() => document.documentElement.outerHTML")

    def execute_script(self, script: str, *arguments):
        """As selenium's: `script` is a function body (with `return`), `arguments` its
        arguments; it runs in the page's own realm."""
        return self._call_in({"context": self.context}, f"function() {{ {script} }}", *arguments)

    def find_element(self, by: str, value: str) -> Element:
        return self._find(by, value, within=None, many=False)

    def find_elements(self, by: str, value: str) -> list[Element]:
        return self._find(by, value, within=None, many=True)

    def _find(self, by: str, value: str, within: Element | None, many: bool):
        selectors = {By.ID: lambda v: f'[id="{v}"]', By.NAME: lambda v: f'[name="{v}"]',
                     By.TAG_NAME: lambda v: v, By.CSS_SELECTOR: lambda v: v}
        if by not in selectors:
            raise ValueError(f"locating by {by} is not supported")
        found = self._sandbox_call(
            "(root, selector) => Array.from((root || document).querySelectorAll(selector))",
            within, selectors[by](value))
        if many:
            return found
        if not found:
            raise NoSuchElementException(f"no element {by}={value!r}")
        return found[0]
