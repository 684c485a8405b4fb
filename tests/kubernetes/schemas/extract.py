#!/usr/bin/env python3
"""Writes core-v1.json: the schemas the stand-in API server checks its requests and answers
against, taken unchanged (less their prose) from Kubernetes' official core/v1 OpenAPI v3
document (api/openapi-spec/v3/api__v1_openapi.json, release-1.35).

    extract.py FULL_DOCUMENT > core-v1.json       # regenerate
    extract.py --check FULL_DOCUMENT core-v1.json  # exit 1 when they differ, 77 without the document

Kept: the paths below (the operations on them, with their parameters, request bodies and
responses) and every schema they and the roots below reach through $ref, with
"description" removed and x-kubernetes-group-version-kind narrowed to core/v1 on schemas.
Nothing else is changed."""
import json
import os
import sys

ROOTS = [
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.PodList",
    "io.k8s.api.core.v1.Event",
    "io.k8s.api.core.v1.EventList",
    "io.k8s.api.core.v1.Namespace",
    "io.k8s.api.core.v1.NamespaceList",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
]


PATHS = [
    "/api/v1/namespaces",
    "/api/v1/namespaces/{name}",
    "/api/v1/namespaces/{namespace}/events",
    "/api/v1/namespaces/{namespace}/events/{name}",
    "/api/v1/namespaces/{namespace}/pods",
    "/api/v1/namespaces/{namespace}/pods/{name}",
    "/api/v1/namespaces/{namespace}/pods/{name}/exec",
    "/api/v1/namespaces/{namespace}/pods/{name}/log",
    "/api/v1/namespaces/{namespace}/pods/{name}/status",
    "/api/v1/events",
    "/api/v1/pods",
]


def strip(node, keep_gvk=False):
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "description":
                continue
            if key == "x-kubernetes-group-version-kind" and not keep_gvk:
                value = [g for g in value if g.get("group") == "" and g.get("version") == "v1"]
                if not value:
                    continue
            if key != "properties":
                out[key] = strip(value, keep_gvk)
        if "properties" in node:
            out["properties"] = {k: strip(v, keep_gvk) for k, v in node["properties"].items()}
        return out
    if isinstance(node, list):
        return [strip(x, keep_gvk) for x in node]
    return node


def extract(document):
    schemas = document["components"]["schemas"]
    seen = set()

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref":
                    name = value.rsplit("/", 1)[-1]
                    if name not in seen:
                        seen.add(name)
                        walk(schemas[name])
                else:
                    walk(value)
        elif isinstance(node, list):
            for x in node:
                walk(x)

    for root in ROOTS:
        seen.add(root)
        walk(schemas[root])
    paths = {path: document["paths"][path] for path in PATHS}
    walk(paths)
    return {
        "openapi": document["openapi"],
        "paths": {path: strip(ops, keep_gvk=True) for path, ops in paths.items()},
        "info": {
            "title": "Kubernetes core/v1 paths and schemas the corral stand-in API server checks",
            "version": document["info"]["version"],
            "x-source": "kubernetes/kubernetes release-1.35 api/openapi-spec/v3/api__v1_openapi.json "
                      "(sha256 45666551cf0928e4e8a9b88508f9b23aa78d2341aa27b0587457b2694717fcc1), "
                      "descriptions removed; regenerate with extract.py",
            "license": {"name": "Apache-2.0 (The Kubernetes Authors)"},
        },
        "components": {"schemas": {name: strip(schemas[name]) for name in sorted(seen)}},
    }


def render(doc):
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main(argv):
    if len(argv) == 4 and argv[1] == "--check":
        if not argv[2] or not os.path.exists(argv[2]):
            print("skipped: the official document is not here (configure with -DCORRAL_K8S_OPENAPI_DOCUMENT=PATH)")
            return 77
        with open(argv[2]) as f:
            want = render(extract(json.load(f)))
        with open(argv[3]) as f:
            have = f.read()
        if want != have:
            print(f"{argv[3]} is not what extract.py makes of {argv[2]}; regenerate it", file=sys.stderr)
            return 1
        return 0
    if len(argv) == 2:
        with open(argv[1]) as f:
            sys.stdout.write(render(extract(json.load(f))))
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv))
