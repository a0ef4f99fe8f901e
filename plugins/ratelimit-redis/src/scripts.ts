/**
 * The two Lua scripts of the Redis limiter. Each runs atomically in Redis, so one decision over all
 * of a request's rules is one round trip and no two routers can both take the last unit. Time is
 * Redis's own (`TIME`): routers with skewed clocks still agree on every window.
 *
 * Per rule, three keys (`<prefix><rule key>:` + `r`, `t`, `s`), all expiring one window after their
 * last write, so a quiet app or developer leaves nothing behind:
 * - `r`: a sorted set of the requests in the window, member = request id, score = time in ms;
 * - `t`: a sorted set of token amounts, member = `<id>:<tokens>` (a reservation) or
 *   `<id>:u:<tokens>` (used tokens), score = time in ms;
 * - `s`: the sum of the amounts in `t`, kept in step with it, so a decision never adds them up.
 */

/**
 * KEYS: r, t, s per rule. ARGV: id, reserved tokens, then per rule: requests, tokens (-1: none),
 * window ms. Returns: allowed (1/0), retry ms, then per rule: remaining requests, reset ms,
 * remaining tokens (-1: none), reset tokens ms (-1: none), retry ms.
 */
export const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
local reserved = tonumber(ARGV[2])
local n = #KEYS / 3
local counts, sums, retries = {}, {}, {}
local worst = 0

local function amount(member)
  return tonumber(string.match(member, ':(%d+)$')) or 0
end

for i = 1, n do
  local rk, tk, sk = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local limit, tlimit, win = tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1]), tonumber(ARGV[3 * i + 2])
  local cutoff = now - win
  redis.call('ZREMRANGEBYSCORE', rk, '-inf', cutoff)
  local count = redis.call('ZCARD', rk)
  local retry = 0
  if count >= limit then
    local entry = redis.call('ZRANGE', rk, count - limit, count - limit, 'WITHSCORES')
    retry = tonumber(entry[2]) + win - now
  end
  local sum = 0
  if tlimit >= 0 then
    local gone = redis.call('ZRANGEBYSCORE', tk, '-inf', cutoff)
    if #gone > 0 then
      local freed = 0
      for _, member in ipairs(gone) do freed = freed + amount(member) end
      redis.call('ZREMRANGEBYSCORE', tk, '-inf', cutoff)
      if freed > 0 then redis.call('DECRBY', sk, freed) end
    end
    sum = tonumber(redis.call('GET', sk) or '0')
    if sum < 0 then sum = 0 end
    local excess = math.max(sum + reserved - tlimit, sum - tlimit + 1)
    if excess > 0 then
      -- Walk the oldest amounts until enough of them would have left the window.
      local tretry = win
      if reserved <= tlimit then
        local freed, start, found = 0, 0, false
        while not found do
          local batch = redis.call('ZRANGE', tk, start, start + 99, 'WITHSCORES')
          if #batch == 0 then break end
          for j = 1, #batch, 2 do
            freed = freed + amount(batch[j])
            if freed >= excess then
              tretry = tonumber(batch[j + 1]) + win - now
              found = true
              break
            end
          end
          start = start + 100
        end
      end
      if tretry > retry then retry = tretry end
    end
  end
  counts[i], sums[i], retries[i] = count, sum, retry
  if retry > worst then worst = retry end
end

local allowed = worst == 0
local out = { allowed and 1 or 0, worst }
for i = 1, n do
  local rk, tk, sk = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local limit, tlimit, win = tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1]), tonumber(ARGV[3 * i + 2])
  local count, sum = counts[i], sums[i]
  if allowed then
    redis.call('ZADD', rk, now, id)
    redis.call('PEXPIRE', rk, win)
    count = count + 1
    if tlimit >= 0 and reserved > 0 then
      redis.call('ZADD', tk, now, id .. ':' .. reserved)
      sum = redis.call('INCRBY', sk, reserved)
      redis.call('PEXPIRE', tk, win)
      redis.call('PEXPIRE', sk, win)
    end
  end
  local reset = 0
  local oldest = redis.call('ZRANGE', rk, 0, 0, 'WITHSCORES')
  if #oldest > 0 then reset = tonumber(oldest[2]) + win - now end
  local remainingTokens, resetTokens = -1, -1
  if tlimit >= 0 then
    remainingTokens = math.max(0, tlimit - sum)
    resetTokens = 0
    local first = redis.call('ZRANGE', tk, 0, 0, 'WITHSCORES')
    if #first > 0 then resetTokens = tonumber(first[2]) + win - now end
  end
  out[#out + 1] = math.max(0, limit - count)
  out[#out + 1] = reset
  out[#out + 1] = remainingTokens
  out[#out + 1] = resetTokens
  out[#out + 1] = retries[i]
end
return out
`;

/**
 * KEYS: t, s per rule that limits tokens. ARGV: reservation member, reserved tokens, used member,
 * used tokens, then per rule: window ms. Removes the reservation while it is still in the window and
 * counts the used tokens from now.
 */
export const SETTLE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reserved, used = tonumber(ARGV[2]), tonumber(ARGV[4])
for i = 1, #KEYS / 2 do
  local tk, sk = KEYS[2 * i - 1], KEYS[2 * i]
  local win = tonumber(ARGV[4 + i])
  if reserved > 0 and redis.call('ZREM', tk, ARGV[1]) == 1 then redis.call('DECRBY', sk, reserved) end
  if used > 0 then
    redis.call('ZADD', tk, now, ARGV[3])
    redis.call('INCRBY', sk, used)
    redis.call('PEXPIRE', tk, win)
    redis.call('PEXPIRE', sk, win)
  end
end
return 1
`;
