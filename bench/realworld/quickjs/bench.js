// Classic interpreter workloads, written for this benchmark: recursion, a typed-array sieve,
// objects and method calls, string building with regular expressions, sorting with a
// comparator, a Map with string keys, a JSON round trip. The value of the script is one
// unsigned 32-bit checksum (FNV-1a mixing); deterministic on every target (its own
// generator, no Date, no Math.random).
var scale = typeof SCALE === 'number' ? SCALE : 1;
var h = 2166136261;
function mix(v) { h = Math.imul((h ^ (v | 0)) >>> 0, 16777619) >>> 0; }

var seed = 42;
function rand(n) { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % n; }

function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
mix(fib(22 + scale));

function sieve(n) {
  var composite = new Uint8Array(n + 1), count = 0;
  for (var i = 2; i <= n; i++) {
    if (!composite[i]) { count++; for (var j = i * i; j <= n; j += i) composite[j] = 1; }
  }
  return count;
}
mix(sieve(500000 * scale));

class Vec {
  constructor(x, y) { this.x = x; this.y = y; }
  add(o) { return new Vec(this.x + o.x, this.y + o.y); }
  scale(k) { return new Vec(this.x * k, this.y * k); }
  dot(o) { return this.x * o.x + this.y * o.y; }
}
function particles(steps) {
  var ps = [];
  for (var i = 0; i < 64; i++) ps.push({ p: new Vec(i, -i), v: new Vec(0.5, 0.25 * (i % 5)) });
  var acc = 0;
  for (var s = 0; s < steps; s++) {
    for (var k = 0; k < ps.length; k++) {
      var q = ps[k];
      q.p = q.p.add(q.v.scale(0.01));
      if (q.p.dot(q.p) > 10000) q.v = q.v.scale(-1);
      acc += q.p.x;
    }
  }
  return Math.floor(acc);
}
mix(particles(1500 * scale));

function strings(n) {
  var parts = [];
  for (var i = 0; i < n; i++) parts.push(i + ':' + (i * 7919 % 65536).toString(16) + ';');
  var s = parts.join('');
  var total = 0, re = /(\d+):([0-9a-f]+);/g, m;
  while ((m = re.exec(s)) !== null) total += m[1].length + parseInt(m[2], 16);
  var replaced = s.replace(/[13579]/g, 'o');
  return total + replaced.length + s.split('ff').length;
}
mix(strings(40000 * scale));

function sorting(n) {
  var t = [];
  for (var i = 0; i < n; i++) t.push({ key: rand(1000000), id: i });
  t.sort(function (a, b) { return a.key - b.key || a.id - b.id; });
  var acc = 0;
  for (var i = 0; i < n; i += 97) acc = (Math.imul(acc, 31) + t[i].key + t[i].id) | 0;
  return acc;
}
mix(sorting(50000 * scale));

function dictionary(n) {
  var d = new Map();
  for (var i = 0; i < n; i++) { var k = 'k' + rand(n >> 1); d.set(k, (d.get(k) || 0) + i); }
  var sum = 0, hits = 0;
  for (var i = 0; i < n; i++) { var v = d.get('k' + i); if (v !== undefined) { hits++; sum = (sum + v) % 1000000007; } }
  return sum + hits;
}
mix(dictionary(60000 * scale));

function json(n) {
  var records = [];
  for (var i = 0; i < n; i++) records.push({ id: i, name: 'item' + i, tags: ['a', 'b' + (i % 7)], price: i * 0.25 });
  var text = JSON.stringify(records);
  var back = JSON.parse(text), acc = text.length;
  for (var i = 0; i < back.length; i += 13) acc = (acc + back[i].id + back[i].tags[1].length + back[i].price * 4) | 0;
  return acc;
}
mix(json(20000 * scale));

h;
