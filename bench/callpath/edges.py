#!/usr/bin/env python3
"""edges-table.py RESULT1.json RESULT2.json: the union of the direct
cross-file edges of the first run and the steady state, as a Markdown table
in the order first met, marking which run had each edge, plus counts of the
edges that also cross a package."""
import json, sys

def pkg(f):
    return f.rsplit("/", 1)[0] if "/" in f else "."

runs = [json.load(open(p)) for p in sys.argv[1:3]]
order, seen = [], {}
for i, r in enumerate(runs):
    for e in r["direct"]["edges"]:
        k = tuple(e[:4])
        if k not in seen:
            seen[k] = [0, 0]
            order.append(k)
        seen[k][i] = e[4]
print("| # | caller file:function | callee file:function | calls run 1 | calls run 2 |")
print("|---|---|---|---|---|")
for n, k in enumerate(order, 1):
    c1, c2 = seen[k]
    print(f"| {n} | {k[0]}:{k[1]} | {k[2]}:{k[3]} | {c1 or '-'} | {c2 or '-'} |")
for i, r in enumerate(runs):
    xs = [e for e in r["direct"]["edges"] if pkg(e[0]) != pkg(e[2])]
    print(f"run {i+1}: {len(xs)} of {len(r['direct']['edges'])} direct cross-file edges also cross a package")
print(f"union: {len(order)} distinct direct cross-file edges")
