#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# json-lines.py - the harness's one reader of the reports' JSON lines
# (pthread_json_objects in pthread.exp runs it).  Reads a report's lines
# (bytes) on stdin; each line that starts with "{" must be one JSON
# object, parsed strictly (valid UTF-8; Python's json, which rejects raw
# control characters in strings).  Prints one line per such line, in
# order: "OK " and the object as a Tcl dict (a JSON object a dict, in its
# own key order; an array a list; a string its text; a number as written;
# true/false as 1/0; null as the empty string), or "BAD " and why.
import json
import sys


def tcl_word(s):
    """s as one Tcl list element, every special character backslashed"""
    if s == "":
        return "{}"
    out = []
    for ch in s:
        if ch.isalnum() and ch.isascii():
            out.append(ch)
        elif ch in "_.:-+/@,=%":
            out.append(ch)
        elif 0x20 < ord(ch) < 0x7f:
            out.append("\\" + ch)
        else:
            out.append("\\u%04x" % ord(ch) if ord(ch) <= 0xffff else "\\U%08x" % ord(ch))
    return "".join(out)


def tcl_dict(d):
    return " ".join(tcl_word(k) + " " + tcl(x) for k, x in d.items())


def tcl(v):
    if isinstance(v, dict):
        return tcl_word(tcl_dict(v))
    if isinstance(v, list):
        return tcl_word(" ".join(tcl(x) for x in v))
    if isinstance(v, bool):
        return "1" if v else "0"
    if v is None:
        return "{}"
    return tcl_word(v)  # (a string; numbers are read as strings, as written)


def main():
    for raw in sys.stdin.buffer.read().split(b"\n"):
        if not raw.startswith(b"{"):
            continue
        try:
            o = json.loads(raw.decode("utf-8", errors="strict"), parse_float=str, parse_int=str)
        except (UnicodeDecodeError, ValueError) as e:
            print("BAD not strict JSON (%s): %r" % (e, raw[:200]))
            continue
        if not isinstance(o, dict):
            print("BAD not an object: %r" % raw[:200])
            continue
        print("OK " + tcl_dict(o))


main()
