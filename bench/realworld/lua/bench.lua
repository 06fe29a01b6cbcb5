-- Classic interpreter workloads, written for this benchmark: recursion, a sieve, an n-body
-- step loop, string building and matching, sorting with a comparator, a string-keyed table.
-- Returns one integer checksum (wrapping 64-bit FNV-style mixing); deterministic on every
-- target (its own generator, no pairs() order in the result).
local scale = SCALE or 1
local h = -3750763034362895579 -- FNV-1a 64 offset basis as a signed integer
local function mix(v) h = (h ~ v) * 1099511628211 end

local seed = 42
local function rand(n) -- LCG; integer in [0, n)
  seed = (seed * 6364136223846793005 + 1442695040888963407)
  return ((seed >> 33) % n)
end

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
mix(fib(24 + scale))

local function sieve(n)
  local composite, count = {}, 0
  for i = 2, n do
    if not composite[i] then
      count = count + 1
      for j = i * i, n, i do composite[j] = true end
    end
  end
  return count
end
mix(sieve(400000 * scale))

local function nbody(steps)
  local bodies = {}
  for i = 1, 5 do
    bodies[i] = { x = i * 1.5, y = -i * 0.7, z = i * 0.3, vx = 0.01 * i, vy = 0.02, vz = -0.01 * i,
                  m = 1.0 / i }
  end
  local dt = 0.01
  for _ = 1, steps do
    for i = 1, #bodies do
      local a = bodies[i]
      for j = i + 1, #bodies do
        local b = bodies[j]
        local dx, dy, dz = a.x - b.x, a.y - b.y, a.z - b.z
        local d2 = dx * dx + dy * dy + dz * dz + 0.01
        local mag = dt / (d2 * math.sqrt(d2))
        a.vx = a.vx - dx * b.m * mag; a.vy = a.vy - dy * b.m * mag; a.vz = a.vz - dz * b.m * mag
        b.vx = b.vx + dx * a.m * mag; b.vy = b.vy + dy * a.m * mag; b.vz = b.vz + dz * a.m * mag
      end
    end
    for i = 1, #bodies do
      local a = bodies[i]
      a.x = a.x + dt * a.vx; a.y = a.y + dt * a.vy; a.z = a.z + dt * a.vz
    end
  end
  local e = 0.0
  for i = 1, #bodies do local a = bodies[i]; e = e + a.m * (a.vx * a.vx + a.vy * a.vy + a.vz * a.vz) end
  return e
end
mix(math.floor(nbody(60000 * scale) * 1e9))

local function strings(n)
  local parts = {}
  for i = 1, n do parts[#parts + 1] = string.format("%d:%x;", i, i * 7919 % 65536) end
  local s = table.concat(parts)
  local total = 0
  for a, b in s:gmatch("(%d+):(%x+);") do total = total + #a + tonumber(b, 16) end
  local replaced = s:gsub("[13579]", "o")
  return total + #replaced + select(2, s:gsub("ff", ""))
end
mix(strings(60000 * scale))

local function sorting(n)
  local t = {}
  for i = 1, n do t[i] = { key = rand(1000000), id = i } end
  table.sort(t, function(a, b) if a.key ~= b.key then return a.key < b.key end return a.id < b.id end)
  local acc = 0
  for i = 1, n, 97 do acc = acc * 31 + t[i].key + t[i].id end
  return acc
end
mix(sorting(60000 * scale))

local function dictionary(n)
  local d = {}
  for i = 1, n do
    local k = "k" .. rand(n // 2)
    d[k] = (d[k] or 0) + i
  end
  local sum, hits = 0, 0
  for i = 1, n do
    local v = d["k" .. i]
    if v then hits = hits + 1; sum = sum + v end
  end
  return sum * 1000003 + hits
end
mix(dictionary(100000 * scale))

return h
