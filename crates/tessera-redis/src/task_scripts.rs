//! The Lua scripts of [`RedisTaskStore`](crate::RedisTaskStore): each
//! operation that reads and writes runs as one script, so it is atomic and
//! costs one round trip.
//!
//! A task is a hash `{prefix}task:{id}` with short field names: `o` owner,
//! `m` method, `c` created (ms), `t` ttl (ms, empty for none), `p` poll
//! interval (ms, empty for none), `s` status, `sm` status message, `ir`
//! input requests, `r` result, `e` error (the last three as JSON; a field is
//! absent when the value is `None`), `u` updated (ms), `i` the instance that
//! created it, `x` its member in the owner's index. Beside it:
//!
//! - `{prefix}owner:{owner}`: a sorted set of `{created:020}:{id}` (all
//!   scores 0, so members sort by creation time then id), for listing;
//! - `{prefix}expiry`: a sorted set of ids scored by `created + ttl`, for
//!   sweeping;
//! - `{prefix}running:{instance}`: the ids of the unfinished tasks an
//!   instance created, for `fail_unfinished` after its restart;
//! - `{prefix}unfinished` and `{prefix}unfinished:{owner}`: the ids of every
//!   unfinished task, and of each owner's, so that the caps on running tasks
//!   hold across instances (`TaskStore::count`).
//!
//! Every key has a Redis TTL: a task's is its lifetime plus a grace period,
//! and each index's is stretched to the longest task in it. The scripts build
//! some key names from the prefix, so the store needs a standalone Redis (or
//! one primary), not Redis Cluster.

use redis::Script;

/// Stretches a key's TTL to at least `px` ms.
const EXTEND: &str = r"
local function extend(key, px)
  if redis.call('PTTL', key) < px then redis.call('PEXPIRE', key, px) end
end
";

/// True for the statuses that never change again.
const TERMINAL: &str = r"
local function terminal(s)
  return s == 'completed' or s == 'failed' or s == 'cancelled'
end
";

/// KEYS: task, owner index, expiry index, running set, unfinished set,
/// the owner's unfinished set.
/// ARGV: px, index member, expires ('' for none), id, '1' when unfinished,
/// then the hash's field/value pairs. Returns 1, or 0 when the id is taken.
pub(crate) fn create() -> Script {
    Script::new(&format!(
        "{EXTEND}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local px = tonumber(ARGV[1])
local fields = {{}}
for i = 6, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('PEXPIRE', KEYS[1], px)
redis.call('ZADD', KEYS[2], 0, ARGV[2])
extend(KEYS[2], px)
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
  extend(KEYS[3], px)
end
if ARGV[5] == '1' then
  for k = 4, 6 do
    redis.call('SADD', KEYS[k], ARGV[4])
    extend(KEYS[k], px)
  end
end
return 1
"
    ))
}

/// KEYS: task. ARGV: now, status, then status message, input requests,
/// result, error (each `+value`, or `-` for none), the running-set prefix,
/// the id, the unfinished set. Returns `{'none'}`, or `{'terminal'|'applied', field, value, …}`.
pub(crate) fn update() -> Script {
    Script::new(&format!(
        "{TERMINAL}
local h = redis.call('HMGET', KEYS[1], 's', 'c', 't', 'u', 'i', 'o')
if not h[1] then return {{'none'}} end
local now = tonumber(ARGV[1])
if h[3] ~= '' and now >= tonumber(h[2]) + tonumber(h[3]) then return {{'none'}} end
if terminal(h[1]) then
  local out = redis.call('HGETALL', KEYS[1])
  table.insert(out, 1, 'terminal')
  return out
end
local function put(field, v)
  if string.sub(v, 1, 1) == '+' then
    redis.call('HSET', KEYS[1], field, string.sub(v, 2))
  else
    redis.call('HDEL', KEYS[1], field)
  end
end
redis.call('HSET', KEYS[1], 's', ARGV[2])
put('sm', ARGV[3])
put('ir', ARGV[4])
put('r', ARGV[5])
put('e', ARGV[6])
if now > tonumber(h[4]) then redis.call('HSET', KEYS[1], 'u', ARGV[1]) end
if terminal(ARGV[2]) and h[5] then redis.call('SREM', ARGV[7] .. h[5], ARGV[8]) end
if terminal(ARGV[2]) then
  redis.call('SREM', ARGV[9], ARGV[8])
  if h[6] then redis.call('SREM', ARGV[9] .. ':' .. h[6], ARGV[8]) end
end
local out = redis.call('HGETALL', KEYS[1])
table.insert(out, 1, 'applied')
return out
"
    ))
}

/// KEYS: owner index. ARGV: task key prefix, first member bound (`-` or
/// `(member`), now, how many, owner. Returns `{id, {field, value, …}, …}`
/// for the owner's live tasks in order, dropping index entries whose task
/// is gone.
pub(crate) fn list() -> Script {
    Script::new(
        r"
local want = tonumber(ARGV[4])
local now = tonumber(ARGV[3])
local out = {}
local n = 0
local from = ARGV[2]
while n < want do
  local ms = redis.call('ZRANGEBYLEX', KEYS[1], from, '+', 'LIMIT', 0, 100)
  if #ms == 0 then break end
  for _, m in ipairs(ms) do
    local id = string.sub(m, 22)
    local h = redis.call('HGETALL', ARGV[1] .. id)
    local f = {}
    for i = 1, #h, 2 do f[h[i]] = h[i + 1] end
    if f['x'] ~= m or f['o'] ~= ARGV[5] then
      redis.call('ZREM', KEYS[1], m)
    elseif f['t'] == '' or now < tonumber(f['c']) + tonumber(f['t']) then
      n = n + 1
      out[#out + 1] = id
      out[#out + 1] = h
      if n >= want then break end
    end
  end
  from = '(' .. ms[#ms]
end
return out
",
    )
}

/// KEYS: expiry index. ARGV: task key prefix, owner index prefix, running
/// set prefix, now, batch size, the unfinished set. Deletes up to a batch of tasks expired at
/// `now`; returns `{deleted, looked at}`.
pub(crate) fn sweep() -> Script {
    Script::new(
        r"
local now = tonumber(ARGV[4])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[4], 'LIMIT', 0, tonumber(ARGV[5]))
local n = 0
for _, id in ipairs(ids) do
  local k = ARGV[1] .. id
  local h = redis.call('HMGET', k, 'o', 'c', 't', 'i', 'x')
  if h[1] and h[3] ~= '' and now >= tonumber(h[2]) + tonumber(h[3]) then
    redis.call('DEL', k)
    redis.call('ZREM', ARGV[2] .. h[1], h[5])
    if h[4] then redis.call('SREM', ARGV[3] .. h[4], id) end
    redis.call('SREM', ARGV[6], id)
    redis.call('SREM', ARGV[6] .. ':' .. h[1], id)
    n = n + 1
  end
  redis.call('ZREM', KEYS[1], id)
end
return {n, #ids}
",
    )
}

/// KEYS: this instance's running set. ARGV: task key prefix, now, status
/// message, error (JSON), the unfinished set. Fails every unfinished task in the set, empties
/// it, returns how many were failed.
pub(crate) fn fail_unfinished() -> Script {
    Script::new(&format!(
        "{TERMINAL}
local ids = redis.call('SMEMBERS', KEYS[1])
local n = 0
for _, id in ipairs(ids) do
  local k = ARGV[1] .. id
  local h = redis.call('HMGET', k, 's', 'u', 'o')
  redis.call('SREM', ARGV[5], id)
  if h[3] then redis.call('SREM', ARGV[5] .. ':' .. h[3], id) end
  if h[1] and not terminal(h[1]) then
    redis.call('HSET', k, 's', 'failed', 'sm', ARGV[3], 'e', ARGV[4])
    redis.call('HDEL', k, 'ir', 'r')
    if tonumber(ARGV[2]) > tonumber(h[2]) then redis.call('HSET', k, 'u', ARGV[2]) end
    n = n + 1
  end
end
redis.call('DEL', KEYS[1])
return n
"
    ))
}
