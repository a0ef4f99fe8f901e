/**
 * The two Lua scripts of the Redis limiter. Each runs atomically in Redis, so one decision over all
 * of a request's rules is one round trip and no two routers can both take the last unit. Time is
 * Redis's own (`TIME`): routers with skewed clocks still agree on every window.
 *
 * Per rule, four keys (`<prefix><rule key>:` + `r`, `tb`, `cb`, `q`), all expiring one window after
 * their last write, so a quiet app or developer leaves nothing behind:
 * - `r`: a sorted set of the requests in the window, member = request id, score = time in ms (none
 *   for a rule without `requests`; at most `requests` members, since refused requests are not added);
 * - `tb`: a hash of token amounts by bucket: field = the bucket's start in ms, value = the tokens
 *   counted in it. A window is cut into at most `BUCKETS` buckets, so the hash holds at most that
 *   many fields however busy the key (README "Budgets" on the precision this costs);
 * - `cb`: the same for cost, in whole nano-dollars (`costUnits` of `@modelmux/core`): integers, so
 *   every router's `HINCRBY` adds up exactly;
 * - `q`: a sorted set of the reservations not yet settled, member = request id, score = the start of
 *   the bucket they were added to; dropped at settle, or when that bucket leaves the window.
 * Amounts reach Redis as the decimal strings the router sent, and numbers computed in Lua are
 * written with `%d`: a Lua number turned into a string may take an exponent (`1e+15`).
 */

/** How many buckets a window is cut into for amounts; `ratelimit-memory` cuts it the same way. */
export const BUCKETS = 100;

/** The Lua both scripts share: integers as text, and a window's buckets. */
const SHARED = `
local function int(x) return string.format('%d', x) end
-- A window's buckets: their width in ms, how many, the current one's start, and the oldest start still counted.
local function buckets(win, now)
  local width = math.max(1, math.ceil(win / ${BUCKETS}))
  local count = math.ceil(win / width)
  local current = math.floor(now / width) * width
  return width, count, current, current - (count - 1) * width
end
`;

/**
 * KEYS: r, tb, cb, q per rule. ARGV: id, reserved tokens, reserved cost units, then per rule:
 * requests, tokens, cost units (each -1: not limited), window ms. Returns: allowed (1/0), retry ms,
 * then per rule: remaining requests, reset ms, remaining tokens, counted tokens, reset tokens ms,
 * remaining cost units, counted cost units, reset cost ms (-1 for what the rule does not limit),
 * retry ms.
 */
export const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
local n = #KEYS / 4
${SHARED}
-- The two kinds of amount: key offset within a rule's keys, argument offset, the reservation.
local kinds = {
  { key = 2, limit = 1, reserved = tonumber(ARGV[2]), text = ARGV[2] },
  { key = 3, limit = 2, reserved = tonumber(ARGV[3]), text = ARGV[3] },
}

-- The buckets of hash hk still in the window (those that left it are dropped): their sum, their
-- starts oldest first, and their amounts by start. A bucket of a former window's width counts
-- as the bucket of today's width that holds its start.
local function counted(hk, width, edge)
  local flat = redis.call('HGETALL', hk)
  local sum, starts, amounts, gone = 0, {}, {}, {}
  for j = 1, #flat, 2 do
    local start, amount = tonumber(flat[j]), tonumber(flat[j + 1])
    if math.floor(start / width) * width < edge or amount <= 0 then
      gone[#gone + 1] = flat[j]
    else
      starts[#starts + 1] = start
      amounts[start] = amount
      sum = sum + amount
    end
  end
  if #gone > 0 then redis.call('HDEL', hk, unpack(gone)) end
  table.sort(starts)
  return sum, starts, amounts
end

-- Ms until \`want\` more fit under \`limit\` (0: now): the oldest buckets must leave the window.
local function retry_of(c, want, limit, win, width, count)
  local excess = math.max(c.sum + want - limit, c.sum - limit + 1)
  if excess <= 0 then return 0 end
  if want > limit then return win end
  local freed = 0
  for _, start in ipairs(c.starts) do
    freed = freed + c.amounts[start]
    if freed >= excess then return math.floor(start / width) * width + count * width - now end
  end
  return win
end

local counts, amounts, retries = {}, {}, {}
local worst = 0
for i = 1, n do
  local k, a = 4 * (i - 1), 4 * (i - 1) + 3
  local limit, win = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 4])
  local width, count, current, edge = buckets(win, now)
  local rk = KEYS[k + 1]
  local requests, retry = 0, 0
  if limit >= 0 then
    redis.call('ZREMRANGEBYSCORE', rk, '-inf', now - win)
    requests = redis.call('ZCARD', rk)
    if requests >= limit then
      local entry = redis.call('ZRANGE', rk, requests - limit, requests - limit, 'WITHSCORES')
      retry = tonumber(entry[2]) + win - now
    end
  end
  amounts[i] = {}
  for kind, m in ipairs(kinds) do
    local alimit = tonumber(ARGV[a + 1 + m.limit])
    if alimit >= 0 then
      local c = {}
      c.sum, c.starts, c.amounts = counted(KEYS[k + m.key], width, edge)
      local r = retry_of(c, m.reserved, alimit, win, width, count)
      if r > retry then retry = r end
      amounts[i][kind] = c
    end
  end
  counts[i], retries[i] = requests, retry
  if retry > worst then worst = retry end
end

local allowed = worst == 0
local out = { allowed and 1 or 0, worst }
for i = 1, n do
  local k, a = 4 * (i - 1), 4 * (i - 1) + 3
  local limit, win = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 4])
  local width, count, current, edge = buckets(win, now)
  local rk = KEYS[k + 1]
  if limit >= 0 then
    local requests = counts[i]
    if allowed then
      redis.call('ZADD', rk, now, id)
      redis.call('PEXPIRE', rk, win)
      requests = requests + 1
    end
    local reset = 0
    local oldest = redis.call('ZRANGE', rk, 0, 0, 'WITHSCORES')
    if #oldest > 0 then reset = tonumber(oldest[2]) + win - now end
    out[#out + 1] = math.max(0, limit - requests)
    out[#out + 1] = reset
  else
    out[#out + 1] = -1
    out[#out + 1] = -1
  end
  local reserved = false
  for kind, m in ipairs(kinds) do
    local alimit = tonumber(ARGV[a + 1 + m.limit])
    if alimit >= 0 then
      local c = amounts[i][kind]
      local sum, oldest = c.sum, c.starts[1]
      if allowed and m.reserved > 0 then
        local hk = KEYS[k + m.key]
        redis.call('HINCRBY', hk, int(current), m.text)
        redis.call('PEXPIRE', hk, win)
        sum = sum + m.reserved
        oldest = oldest or current
        reserved = true
      end
      local areset = 0
      if oldest then areset = math.floor(oldest / width) * width + count * width - now end
      out[#out + 1] = math.max(0, alimit - sum)
      out[#out + 1] = sum
      out[#out + 1] = areset
    else
      out[#out + 1] = -1
      out[#out + 1] = -1
      out[#out + 1] = -1
    end
  end
  if reserved then
    local q = KEYS[k + 4]
    redis.call('ZREMRANGEBYSCORE', q, '-inf', '(' .. int(edge))
    redis.call('ZADD', q, int(current), id)
    redis.call('PEXPIRE', q, win)
  end
  out[#out + 1] = retries[i]
end
return out
`;

/**
 * KEYS: tb, cb, q per rule that limits tokens or cost. ARGV: id, reserved tokens, used tokens,
 * reserved cost units, used cost units, then per rule: window ms, limits tokens (1/0), limits cost
 * (1/0). Takes each reservation out of the bucket it was added to while that bucket is in the
 * window, and counts the amounts used in the current bucket.
 */
export const SETTLE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
${SHARED}
local kinds = {
  { key = 1, flag = 2, reserved = ARGV[2], used = ARGV[3] },
  { key = 2, flag = 3, reserved = ARGV[4], used = ARGV[5] },
}
for i = 1, #KEYS / 3 do
  local k, a = 3 * (i - 1), 3 * (i - 1) + 5
  local win = tonumber(ARGV[a + 1])
  local width, count, current, edge = buckets(win, now)
  local q = KEYS[k + 3]
  local at = redis.call('ZSCORE', q, id)
  local held = false
  if at then
    redis.call('ZREM', q, id)
    at = tonumber(at)
    held = math.floor(at / width) * width >= edge
  end
  for _, m in ipairs(kinds) do
    if ARGV[a + m.flag] == '1' then
      local hk = KEYS[k + m.key]
      if held and tonumber(m.reserved) > 0 and redis.call('HEXISTS', hk, int(at)) == 1 then
        if redis.call('HINCRBY', hk, int(at), '-' .. m.reserved) <= 0 then redis.call('HDEL', hk, int(at)) end
      end
      if tonumber(m.used) > 0 then
        redis.call('HINCRBY', hk, int(current), m.used)
        redis.call('PEXPIRE', hk, win)
      end
    end
  end
end
return 1
`;
