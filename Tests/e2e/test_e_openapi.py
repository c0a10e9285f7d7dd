"""(e) docs/verification-api.yaml is a valid OpenAPI 3.0 document, and every response the
tests a-d got from a verification server matches it: a documented status for that path on that
listener, a body of the documented schema, the documented headers. Runs last (file order)."""

from __future__ import annotations

from collections import Counter

import pytest
from jsonschema import Draft4Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from e2e_support import OPENAPI_PATH, load_openapi

DOC_URI = "urn:verification-api"

# (listener, path, status) the suite must have seen, so that this check is not vacuous.
EXPECTED = {
    ("app", "/version/v1/registrationToken", 201), ("app", "/version/v1/registrationToken", 400),
    ("app", "/version/v1/registrationToken", 406), ("app", "/version/v1/registrationToken", 415),
    ("app", "/version/v1/tan", 201), ("app", "/version/v1/tan", 400),
    ("app", "/version/v1/testresult", 200), ("app", "/version/v1/testresult", 400),
    ("internal", "/version/v1/tan/teletan", 201), ("internal", "/version/v1/tan/teletan", 400),
    ("internal", "/version/v1/tan/teletan", 401),
    ("internal", "/version/v1/tan/teletan", 429),
    ("internal", "/version/v1/tan/verify", 200), ("internal", "/version/v1/tan/verify", 404),
    ("internal", "/version/v1/tan/verify", 406),
    ("internal", "/version/v1/tan/teletan/status", 200), ("internal", "/version/v1/tan/teletan/status", 400),
    ("internal", "/version/v1/tan/teletan/status", 401),
    ("internal", "/version/v1/tan/teletan/revoke", 200), ("internal", "/version/v1/tan/teletan/revoke", 401),
    ("internal", "/version/v1/tan/teletan/revoke", 404),
}


def pointer(*parts: str) -> str:
    return "#/" + "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)


class OpenApi:
    def __init__(self):
        self.doc = load_openapi()
        self.registry = Registry().with_resource(DOC_URI, Resource.from_contents(self.doc, default_specification=DRAFT4))

    def deref(self, node: dict) -> dict:
        while "$ref" in node:
            node = self.resolve(node["$ref"])
        return node

    def resolve(self, ref: str) -> dict:
        node = self.doc
        for part in ref.removeprefix("#/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def validator(self, schema_pointer: str) -> Draft4Validator:
        return Draft4Validator({"$ref": DOC_URI + schema_pointer}, registry=self.registry)

    def listener_of(self, path: str, method: str) -> str | None:
        operation = self.doc["paths"].get(path, {}).get(method.lower())
        if operation is None:
            return None
        (tag,) = operation["tags"]
        return tag


@pytest.fixture(scope="module")
def openapi() -> OpenApi:
    return OpenApi()


def test_document_is_valid_openapi_3_0(openapi):
    validate(openapi.doc)
    assert openapi.doc["openapi"].startswith("3.0")
    ports = sorted(server["url"].rsplit(":", 1)[1] for server in openapi.doc["servers"])
    assert ports == ["8081", "8082"]
    for path, item in openapi.doc["paths"].items():
        for method, operation in item.items():
            if method == "servers":
                continue
            assert operation["tags"] in (["app"], ["internal"]), (method, path)
            (server,) = item["servers"]
            assert server["url"].endswith(":8081" if operation["tags"] == ["app"] else ":8082"), path
    for path in ("/version/v1/tan/teletan", "/version/v1/tan/teletan/status", "/version/v1/tan/teletan/revoke"):
        # Either a portal's ES256 token or a trusted Keycloak realm's RS256 token.
        assert openapi.doc["paths"][path]["post"]["security"] == [{"portalToken": []}, {"realmToken": []}], path
    for name in ("portalToken", "realmToken"):
        scheme = openapi.doc["components"]["securitySchemes"][name]
        assert (scheme["type"], scheme["scheme"], scheme["bearerFormat"]) == ("http", "bearer", "JWT")


def test_document_examples_match_their_patterns(openapi):
    for name in ("TeleTan", "UuidV4"):
        schema = openapi.doc["components"]["schemas"][name]
        openapi.validator(pointer("components", "schemas", name)).validate(schema["example"])


def test_every_recorded_response_matches_the_document(openapi, response_log):
    responses = response_log.responses
    if not responses:
        pytest.skip("no responses recorded: run the whole suite (tests a-d record them)")
    problems = []
    seen = Counter()
    for response in responses:
        where = f"{response.method} {response.path} on the {response.listener} listener -> {response.status} ({response.test})"
        documented_on = openapi.listener_of(response.path, response.method)
        if documented_on != response.listener:
            # Not an operation of this listener: must be a JSON 404 of the error schema.
            if response.status != 404:
                problems.append(f"{where}: undocumented operation answered other than 404")
                continue
            errors = list(openapi.validator(pointer("components", "schemas", "Error")).iter_errors(response.json()))
            problems += [f"{where}: {error.message}" for error in errors]
            continue
        seen[(response.listener, response.path, response.status)] += 1
        operation = openapi.doc["paths"][response.path][response.method.lower()]
        documented = operation["responses"].get(str(response.status))
        if documented is None:
            problems.append(f"{where}: status not documented")
            continue
        documented = openapi.deref(documented)
        for name, header in documented.get("headers", {}).items():
            header = openapi.deref(header)
            value = response.headers.get(name.lower())
            if value is None:
                if header.get("required"):
                    problems.append(f"{where}: header {name} missing")
                continue
            header_schema = header["schema"]
            if header_schema.get("type") == "integer":
                if not value.isdigit():
                    problems.append(f"{where}: header {name} {value!r} is not an integer")
                    continue
                value = int(value)
            problems += [f"{where}: header {name}: {e.message}" for e in Draft4Validator(header_schema).iter_errors(value)]
        content = documented.get("content")
        if content is None:
            if response.body:
                problems.append(f"{where}: body documented empty, got {len(response.body)} bytes")
            continue
        content_type = response.headers.get("content-type", "").split(";")[0].strip()
        if content_type not in content:
            problems.append(f"{where}: content type {content_type!r} not documented")
            continue
        raw = operation["responses"][str(response.status)]
        # The response object's own location: its $ref target, or inline in the operation.
        base = raw["$ref"] if "$ref" in raw else pointer("paths", response.path, response.method.lower(),
                                                          "responses", str(response.status))
        schema_pointer = base + pointer("content", content_type, "schema")[1:]
        errors = list(openapi.validator(schema_pointer).iter_errors(response.json()))
        problems += [f"{where}: {error.json_path}: {error.message}" for error in errors]
    assert not problems, f"{len(problems)} of {len(responses)} responses do not match {OPENAPI_PATH.name}:\n" + "\n".join(problems)
    missing = EXPECTED - set(seen)
    assert not missing, f"the suite never saw: {sorted(missing)}"
    print(f"{len(responses)} responses checked")
