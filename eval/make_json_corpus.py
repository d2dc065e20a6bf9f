#!/usr/bin/env python3
"""Builds datasets/json-train/docs.jsonl, the training corpus of models/json-tiny.

Every JSON object or array found in the JSON documents the repository already
ships (the schemas and instances of JSON-Schema-Test-Suite draft2020-12, the
gold completions and schemas of json-mode-eval), serialized compactly with
non-ASCII escaped, at most 127 bytes long, first occurrence kept, in file
order. Run from the repository root: python3 eval/make_json_corpus.py
"""
import glob
import json

LIMIT = 127


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=True)


def main():
    seen, docs = set(), []

    def add(v):
        d = compact(v)
        if d not in seen and len(d) <= LIMIT and d[0] in "{[":
            seen.add(d)
            docs.append(d)

    root = "datasets/json-schema"
    for f in sorted(glob.glob(f"{root}/json-schema-test-suite/draft2020-12/*.json")):
        for group in json.load(open(f)):
            add(group["schema"])
            for t in group["tests"]:
                add(t["data"])
    for f in sorted(glob.glob(f"{root}/json-mode-eval/*.json")):
        case = json.load(open(f))
        for t in case["tests"]:
            add(t["data"])
        add(case["schema"])
    with open("datasets/json-train/docs.jsonl", "w") as out:
        for d in docs:
            out.write(d + "\n")
    print(len(docs), "documents")


if __name__ == "__main__":
    main()
