"""Every metric the alert rules (docs/deploy/alerts.yml) name is one the portal exports: scraped
from a running instance after a two-step sign-in and a teleTAN, so that every series exists.
(When each alert fires is tested by `promtool test rules docs/deploy/alerts.test.yml`.)"""

from __future__ import annotations

import re

import requests
import yaml

from conftest import REPO, wait_until

ALERTS = REPO / "docs" / "deploy" / "alerts.yml"
# Prometheus's own series, not the portal's.
PROMETHEUS_OWN = {"up"}


def metric_names_in_rules() -> set[str]:
    rules = [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]
    names: set[str] = set()
    for rule in rules:
        # Metric names: identifiers directly before "{", "[" or ")" or at the end, not functions,
        # keywords or label names (those stand inside braces or after by/without).
        expression = re.sub(r"\{[^}]*\}", "{}", rule["expr"])
        expression = re.sub(r"\b(by|without)\s*\([^)]*\)", "", expression)
        for name in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expression):
            if name.startswith("portal_") or name in PROMETHEUS_OWN:
                names.add(name)
    return names


def exported_series(metrics_port: int) -> set[str]:
    text = requests.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    return {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}


def test_every_metric_of_the_alert_rules_is_exported(deployment):
    named = metric_names_in_rules()
    assert {"portal_audit_chain_intact", "portal_pam_duration_seconds_bucket", "portal_database_up"} <= named, named
    officer = deployment.client()
    officer.sign_in()
    assert [answer.status for answer in officer.issue()] == [200, 303, 200]
    # Each instance reports the shared state (database, audit trail) at its own scrape; the
    # request counters of whichever instance served. The first checkpoint is signed at start-up.
    exported = set()
    for instance in deployment.instances:
        exported |= exported_series(instance.metrics_port)
    wait_until(lambda: "portal_audit_last_checkpoint_timestamp_seconds" in exported_series(deployment.instances[0].metrics_port),
               30, "the first audit checkpoint")
    exported |= exported_series(deployment.instances[0].metrics_port)
    missing = named - PROMETHEUS_OWN - exported
    assert not missing, f"alerts.yml names metrics the portal does not export: {sorted(missing)}"


def test_every_audit_action_the_alerts_name_exists():
    """An alert that says "action X" sends the operator to /admin/audit to filter by X: X must be
    one of the actions the page offers (Sources/AuditReview/Web/AuditController.swift)."""
    offered = set(re.findall(r'"([a-z_.]+)"', (REPO / "Sources/AuditReview/Web/AuditController.swift").read_text()))
    named = set(re.findall(r"\baction ([a-z_.]+)", ALERTS.read_text()))
    assert named and named <= offered, named - offered
