"""The one Python test toolkit of the repository, shared by every suite under Tests/ and by the
tools under scripts/ (import it as `support`, e.g. `from support.portal_client import Client`):

- `support.portal_client`: an officer's browser as plain HTTP (cookies, CSRF tokens, one-use form
  nonces, sign-in with or without the second step, issuing) and the portal process the fault,
  backup and directory suites run with its limits off;
- `support.database`: psql and SQLite access to a server's database (`psql()`, `DatabaseAccess`);
- `support.processes_and_browsers`: server processes, free ports, and the headless Chromium
  (`chromium()`, the one browser fixture's body);
- `support.secrets_at_rest`, `support.audit_chain`: the secrets ledger and the independent
  audit-chain checker.

How it is found, without any `sys.path` edit: pytest reads `pythonpath = ["Tests"]` from the
repository's pyproject.toml; the scripts under scripts/ that use it run with PYTHONPATH=Tests
(scripts/soak.sh, scripts/faults.sh and scripts/bench-audit.sh set it)."""
