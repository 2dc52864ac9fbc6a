#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# json-objects.py KEYS... - reads a report's lines (bytes) on stdin and
# checks each JSON line strictly: valid UTF-8, one JSON object (Python's
# json, which rejects raw control characters in strings), its keys among
# the documented ones (KEYS: TYPE=KEY,KEY,...; every type's objects), and
# no member anywhere that a name could have added ("injected").  Prints
# "BAD why" for each problem, and for each object of type lock a line
#   LOCK<tab>lock<tab>lock_name<tab>acquired|holds<tab>waited<tab>holder<tab>site_name
# (the values as decoded: a name's escapes as text, e.g. \x1b).
import json
import sys

allowed = {}
for arg in sys.argv[1:]:
    t, keys = arg.split("=", 1)
    allowed[t] = set(keys.split(","))


def all_keys(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from all_keys(x)
    elif isinstance(v, list):
        for x in v:
            yield from all_keys(x)


for raw in sys.stdin.buffer.read().split(b"\n"):
    if not raw.startswith(b"{"):
        continue
    try:
        o = json.loads(raw.decode("utf-8", errors="strict"))
    except (UnicodeDecodeError, ValueError) as e:
        print("BAD not strict JSON (%s): %r" % (e, raw[:200]))
        continue
    if not isinstance(o, dict):
        print("BAD not an object: %r" % raw[:200])
        continue
    t = o.get("type")
    if t in allowed and not set(o) <= allowed[t]:
        print("BAD %s object with keys %s beyond %s" % (t, sorted(set(o) - allowed[t]), sorted(allowed[t])))
    if "injected" in set(all_keys(o)):
        print("BAD a member named injected: %r" % raw[:200])
    if t == "lock":
        holders = o.get("holders") or o.get("threads") or [{}]
        sites = o.get("sites") or [{}]
        print("\t".join(str(x) for x in ["LOCK", o.get("lock", ""), o.get("lock_name", ""),
                                          o.get("acquired", o.get("holds", "")), o.get("waited", ""),
                                          holders[0].get("holder", holders[0].get("tid", "")),
                                          sites[0].get("site_name", "")]))
