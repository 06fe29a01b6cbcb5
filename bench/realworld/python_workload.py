# A pure-Python workload for timing CPython (python.wasm) in our engines: an integer loop, a
# JSON round trip of 20000 records, regular expressions and a sort of 100000 strings, on the
# standard library only. It must print "599998 74440 20000 1124c". docs/BENCHMARKS.md ("Real
# programs") has the command.
import json, re
s = 0
for i in range(300000): s += i * i % 7
d = [{"k": i, "v": str(i) * 3, "l": list(range(i % 10))} for i in range(20000)]
t = json.loads(json.dumps(d))
n = sum(len(re.findall(r"[13579]+", x["v"])) for x in t)
w = sorted(("%x" % (i * 2654435761 % 1000003)) for i in range(100000))
print(s, n, len(t), w[500])
