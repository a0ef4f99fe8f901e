/**
 * The two Lua scripts of the Redis limiter. Each runs atomically in Redis, so one decision over all
 * of a request's rules is one round trip and no two routers can both take the last unit. Time is
 * Redis's own (`TIME`): routers with skewed clocks still agree on every window.
 *
 * Per rule, five keys (`<prefix><rule key>:` + `r`, `t`, `s`, `c`, `cs`), all expiring one window
 * after their last write, so a quiet app or developer leaves nothing behind:
 * - `r`: a sorted set of the requests in the window, member = request id, score = time in ms (none
 *   for a rule without `requests`);
 * - `t`: a sorted set of token amounts, member = `<id>:<tokens>` (a reservation) or
 *   `<id>:u:<tokens>` (used tokens), score = time in ms;
 * - `s`: the sum of the amounts in `t`, kept in step with it, so a decision never adds them up;
 * - `c`, `cs`: the same for cost, in whole nano-dollars (`costUnits` of `@modelmux/core`): integers,
 *   so every router's `INCRBY` and `DECRBY` add up exactly.
 * Amounts reach Redis as the decimal strings the router sent, and sums computed in Lua are written
 * with `%d`: a Lua number turned into a string may take an exponent (`1e+15`) Redis would refuse.
 */

/** The Lua both scripts share: reading an amount back from its member, and writing integers. */
const AMOUNTS = `
local function int(x) return string.format('%d', x) end
local function amount(member)
  return tonumber(string.match(member, ':(%d+)$')) or 0
end
`;

/**
 * KEYS: r, t, s, c, cs per rule. ARGV: id, reserved tokens, reserved cost units, then per rule:
 * requests, tokens, cost units (each -1: not limited), window ms. Returns: allowed (1/0), retry ms,
 * then per rule: remaining requests, reset ms, remaining tokens, counted tokens, reset tokens ms,
 * remaining cost units, counted cost units, reset cost ms (-1 for what the rule does not limit),
 * retry ms.
 */
export const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
local n = #KEYS / 5
${AMOUNTS}
-- The two kinds of amount: key offsets within a rule's keys, argument offsets, the reservation.
local kinds = {
  { log = 1, sum = 2, limit = 1, reserved = tonumber(ARGV[2]), text = ARGV[2] },
  { log = 3, sum = 4, limit = 2, reserved = tonumber(ARGV[3]), text = ARGV[3] },
}

-- Drops the amounts that left the window from the log and its sum; returns the sum still counted.
local function pruned(lk, sk, cutoff)
  local gone = redis.call('ZRANGEBYSCORE', lk, '-inf', cutoff)
  if #gone > 0 then
    local freed = 0
    for _, member in ipairs(gone) do freed = freed + amount(member) end
    redis.call('ZREMRANGEBYSCORE', lk, '-inf', cutoff)
    if freed > 0 then redis.call('DECRBY', sk, int(freed)) end
  end
  local sum = tonumber(redis.call('GET', sk) or '0')
  if sum < 0 then sum = 0 end
  return sum
end

-- Ms until \`want\` more fit under \`limit\` (0: now): the oldest amounts must leave the window.
local function retry_of(lk, sum, want, limit, win)
  local excess = math.max(sum + want - limit, sum - limit + 1)
  if excess <= 0 then return 0 end
  if want > limit then return win end
  local freed, start = 0, 0
  while true do
    local batch = redis.call('ZRANGE', lk, start, start + 99, 'WITHSCORES')
    if #batch == 0 then return win end
    for j = 1, #batch, 2 do
      freed = freed + amount(batch[j])
      if freed >= excess then return tonumber(batch[j + 1]) + win - now end
    end
    start = start + 100
  end
end

local counts, sums, retries = {}, {}, {}
local worst = 0
for i = 1, n do
  local k, a = 5 * (i - 1), 4 * (i - 1) + 3
  local limit, win = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 4])
  local cutoff = now - win
  local rk = KEYS[k + 1]
  local count, retry = 0, 0
  if limit >= 0 then
    redis.call('ZREMRANGEBYSCORE', rk, '-inf', cutoff)
    count = redis.call('ZCARD', rk)
    if count >= limit then
      local entry = redis.call('ZRANGE', rk, count - limit, count - limit, 'WITHSCORES')
      retry = tonumber(entry[2]) + win - now
    end
  end
  sums[i] = {}
  for kind, m in ipairs(kinds) do
    local alimit = tonumber(ARGV[a + 1 + m.limit])
    if alimit >= 0 then
      local sum = pruned(KEYS[k + 1 + m.log], KEYS[k + 1 + m.sum], cutoff)
      local r = retry_of(KEYS[k + 1 + m.log], sum, m.reserved, alimit, win)
      if r > retry then retry = r end
      sums[i][kind] = sum
    end
  end
  counts[i], retries[i] = count, retry
  if retry > worst then worst = retry end
end

local allowed = worst == 0
local out = { allowed and 1 or 0, worst }
for i = 1, n do
  local k, a = 5 * (i - 1), 4 * (i - 1) + 3
  local limit, win = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 4])
  local rk = KEYS[k + 1]
  if limit >= 0 then
    local count = counts[i]
    if allowed then
      redis.call('ZADD', rk, now, id)
      redis.call('PEXPIRE', rk, win)
      count = count + 1
    end
    local reset = 0
    local oldest = redis.call('ZRANGE', rk, 0, 0, 'WITHSCORES')
    if #oldest > 0 then reset = tonumber(oldest[2]) + win - now end
    out[#out + 1] = math.max(0, limit - count)
    out[#out + 1] = reset
  else
    out[#out + 1] = -1
    out[#out + 1] = -1
  end
  for kind, m in ipairs(kinds) do
    local alimit = tonumber(ARGV[a + 1 + m.limit])
    if alimit >= 0 then
      local lk, sk = KEYS[k + 1 + m.log], KEYS[k + 1 + m.sum]
      local sum = sums[i][kind]
      if allowed and m.reserved > 0 then
        redis.call('ZADD', lk, now, id .. ':' .. m.text)
        sum = redis.call('INCRBY', sk, m.text)
        redis.call('PEXPIRE', lk, win)
        redis.call('PEXPIRE', sk, win)
      end
      local areset = 0
      local first = redis.call('ZRANGE', lk, 0, 0, 'WITHSCORES')
      if #first > 0 then areset = tonumber(first[2]) + win - now end
      out[#out + 1] = math.max(0, alimit - sum)
      out[#out + 1] = sum
      out[#out + 1] = areset
    else
      out[#out + 1] = -1
      out[#out + 1] = -1
      out[#out + 1] = -1
    end
  end
  out[#out + 1] = retries[i]
end
return out
`;

/**
 * KEYS: t, s, c, cs per rule that limits tokens or cost. ARGV: id, reserved tokens, used tokens,
 * reserved cost units, used cost units, then per rule: window ms, limits tokens (1/0), limits cost
 * (1/0). Removes each reservation while it is still in the window and counts the amounts used from
 * now; a repeated settle counts its amounts once.
 */
export const SETTLE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
local kinds = {
  { log = 1, sum = 2, flag = 2, reserved = ARGV[2], used = ARGV[3] },
  { log = 3, sum = 4, flag = 3, reserved = ARGV[4], used = ARGV[5] },
}
for i = 1, #KEYS / 4 do
  local k, a = 4 * (i - 1), 3 * (i - 1) + 5
  local win = tonumber(ARGV[a + 1])
  for _, m in ipairs(kinds) do
    if ARGV[a + m.flag] == '1' then
      local lk, sk = KEYS[k + m.log], KEYS[k + m.sum]
      if tonumber(m.reserved) > 0 and redis.call('ZREM', lk, id .. ':' .. m.reserved) == 1 then redis.call('DECRBY', sk, m.reserved) end
      if tonumber(m.used) > 0 and redis.call('ZADD', lk, now, id .. ':u:' .. m.used) == 1 then
        redis.call('INCRBY', sk, m.used)
        redis.call('PEXPIRE', lk, win)
        redis.call('PEXPIRE', sk, win)
      end
    end
  end
end
return 1
`;
