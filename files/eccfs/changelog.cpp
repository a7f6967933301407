// Changelog: hiredis calls and the Lua scripts that keep ECCFS's queue consistent on the Redis server.
#include "files/eccfs/changelog.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace ecjit::eccfs {
namespace {

// Keys, all under "eccfs:" in the URL's database:
//   config          hash: root, ecc_dir, spec, unit, delay_ms
//   file:<path>     hash: gen (changes so far), op (write | delete), ranges, first (ms)
//   pending         zset: path -> when due (ms)
//   leased          zset: path -> lease expiry (ms); lease:<path> hash: worker, gen
//   firsts          zset: path -> its oldest unprotected change (ms)
//   workers         zset: worker -> last heartbeat (ms)
//   stats           hash: done, failed, expired;   errors  list, newest first, at most 100
constexpr const char *kPrefix = "eccfs:";

// ARGV: path, op, offset, end ("" = to the end), now; the delay is the tree's.
constexpr const char *kNotify = R"lua(
local pfx, path = 'eccfs:', ARGV[1]
local f = pfx .. 'file:' .. path
local cfg = redis.call('HGET', pfx .. 'config', 'delay_ms')
if not cfg then return redis.error_reply('ECCFS tree not initialised (ecjit eccfs init)') end
redis.call('HINCRBY', f, 'gen', 1)
if ARGV[2] == 'delete' then
  redis.call('HSET', f, 'op', 'delete', 'ranges', '')
else
  local t = {}
  local old = redis.call('HGET', f, 'op') == 'write' and redis.call('HGET', f, 'ranges') or ''
  for a, b in string.gmatch(old .. ',' .. ARGV[3] .. '-' .. ARGV[4], '(%d+)%-(%d*)') do
    t[#t + 1] = {tonumber(a), b == '' and math.huge or tonumber(b)}
  end
  table.sort(t, function(x, y) return x[1] < y[1] end)
  local out, last = {}, nil
  for _, r in ipairs(t) do
    if last and r[1] <= last[2] then
      if r[2] > last[2] then last[2] = r[2] end
    else
      last = {r[1], r[2]}
      out[#out + 1] = last
    end
  end
  local s = {}
  for _, r in ipairs(out) do
    s[#s + 1] = string.format('%d', r[1]) .. '-' .. (r[2] == math.huge and '' or string.format('%d', r[2]))
  end
  redis.call('HSET', f, 'op', 'write', 'ranges', table.concat(s, ','))
end
local now = tonumber(ARGV[5])
if redis.call('HSETNX', f, 'first', ARGV[5]) == 1 then redis.call('ZADD', pfx .. 'firsts', now, path) end
redis.call('ZADD', pfx .. 'pending', now + tonumber(cfg), path)
return 1
)lua";

// ARGV: worker, now, lease_ms, at most. Returns {path, op, ranges, gen, first, ...}, up to `at
// most` jobs, or nil.
constexpr const char *kLease = R"lua(
local pfx, now, lease = 'eccfs:', tonumber(ARGV[2]), tonumber(ARGV[3])
for _, p in ipairs(redis.call('ZRANGEBYSCORE', pfx .. 'leased', '-inf', now)) do
  redis.call('ZREM', pfx .. 'leased', p)
  redis.call('DEL', pfx .. 'lease:' .. p)
  redis.call('ZADD', pfx .. 'pending', 'NX', now, p)
  redis.call('HINCRBY', pfx .. 'stats', 'expired', 1)
end
local out, want = {}, tonumber(ARGV[4])
for _, p in ipairs(redis.call('ZRANGEBYSCORE', pfx .. 'pending', '-inf', now, 'LIMIT', 0, want + 64)) do
  if not redis.call('ZSCORE', pfx .. 'leased', p) then
    redis.call('ZREM', pfx .. 'pending', p)
    local f = pfx .. 'file:' .. p
    local gen = redis.call('HGET', f, 'gen')
    if gen then
      redis.call('ZADD', pfx .. 'leased', now + lease, p)
      redis.call('HSET', pfx .. 'lease:' .. p, 'worker', ARGV[1], 'gen', gen)
      for _, v in ipairs({p, redis.call('HGET', f, 'op'), redis.call('HGET', f, 'ranges'), gen, redis.call('HGET', f, 'first')}) do
        out[#out + 1] = v
      end
      if #out >= 5 * want then break end
    end
  end
end
if #out == 0 then return false end
return out
)lua";

// ARGV: path, worker, now, lease_ms.
constexpr const char *kExtend = R"lua(
local pfx, p = 'eccfs:', ARGV[1]
if redis.call('HGET', pfx .. 'lease:' .. p, 'worker') ~= ARGV[2] then return 0 end
redis.call('ZADD', pfx .. 'leased', 'XX', tonumber(ARGV[3]) + tonumber(ARGV[4]), p)
return 1
)lua";

// ARGV: path, worker, gen.
constexpr const char *kComplete = R"lua(
local pfx, p = 'eccfs:', ARGV[1]
local l = pfx .. 'lease:' .. p
if redis.call('HGET', l, 'worker') ~= ARGV[2] then return 0 end
redis.call('DEL', l)
redis.call('ZREM', pfx .. 'leased', p)
local f = pfx .. 'file:' .. p
if redis.call('HGET', f, 'gen') == ARGV[3] then
  redis.call('DEL', f)
  redis.call('ZREM', pfx .. 'firsts', p)
end
redis.call('HINCRBY', pfx .. 'stats', 'done', 1)
return 1
)lua";

// ARGV: path, worker, message, retry_ms.
constexpr const char *kFail = R"lua(
local pfx, p = 'eccfs:', ARGV[1]
local l = pfx .. 'lease:' .. p
if redis.call('HGET', l, 'worker') == ARGV[2] then
  redis.call('DEL', l)
  redis.call('ZREM', pfx .. 'leased', p)
  redis.call('ZADD', pfx .. 'pending', tonumber(ARGV[4]), p)
end
redis.call('HINCRBY', pfx .. 'stats', 'failed', 1)
redis.call('LPUSH', pfx .. 'errors', p .. ': ' .. ARGV[3])
redis.call('LTRIM', pfx .. 'errors', 0, 99)
return 1
)lua";

// ARGV: now. Returns {pending, due, leased, workers, done, failed, expired, oldest first or -1}.
constexpr const char *kStatus = R"lua(
local pfx, now = 'eccfs:', tonumber(ARGV[1])
local st = redis.call('HMGET', pfx .. 'stats', 'done', 'failed', 'expired')
local first = redis.call('ZRANGE', pfx .. 'firsts', 0, 0, 'WITHSCORES')
return {redis.call('ZCARD', pfx .. 'pending'), redis.call('ZCOUNT', pfx .. 'pending', '-inf', now),
        redis.call('ZCARD', pfx .. 'leased'), redis.call('ZCOUNT', pfx .. 'workers', now - 10000, '+inf'),
        tonumber(st[1] or 0), tonumber(st[2] or 0), tonumber(st[3] or 0),
        first[2] and tonumber(first[2]) or -1}
)lua";

Status redis_error(const std::string &where, const std::string &what) {
  return Status(StatusCode::kIoError, "redis " + where + ": " + what);
}

struct ReplyFree {
  void operator()(redisReply *r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

std::string str(const redisReply *r) {
  return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) ? std::string(r->str, r->len) : "";
}

uint64_t num(const redisReply *r) {
  if (!r) return 0;
  if (r->type == REDIS_REPLY_INTEGER) return r->integer < 0 ? 0 : uint64_t(r->integer);
  return r->type == REDIS_REPLY_STRING ? std::strtoull(r->str, nullptr, 10) : 0;
}

}  // namespace

uint64_t now_ms() {
  return uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

class Changelog::Impl {
 public:
  std::string url, host;
  int port = 6379, db = 0;
  uint64_t patience_ms = 30000;
  redisContext *ctx = nullptr;

  ~Impl() {
    if (ctx) redisFree(ctx);
  }

  Status open() {
    if (ctx) redisFree(ctx);
    timeval tv{2, 0};
    ctx = redisConnectWithTimeout(host.c_str(), port, tv);
    if (!ctx || ctx->err) {
      const std::string why = ctx ? ctx->errstr : "out of memory";
      if (ctx) redisFree(ctx);
      ctx = nullptr;
      return redis_error(url, "cannot connect: " + why);
    }
    redisSetTimeout(ctx, timeval{10, 0});
    if (db) {
      Reply r(static_cast<redisReply *>(redisCommand(ctx, "SELECT %d", db)));
      if (!r || r->type == REDIS_REPLY_ERROR) return redis_error(url, "SELECT " + std::to_string(db) + " failed");
    }
    return Status::Ok();
  }

  // One command; a lost connection is retried (reconnecting) until patience_ms has passed.
  Result<Reply> call(const std::vector<std::string> &argv) {
    std::vector<const char *> a;
    std::vector<size_t> len;
    for (const std::string &s : argv) a.push_back(s.data()), len.push_back(s.size());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(patience_ms);
    Status last = Status::Ok();
    for (unsigned attempt = 0;; ++attempt) {
      if (ctx || (last = open()).ok()) {
        Reply r(static_cast<redisReply *>(redisCommandArgv(ctx, int(a.size()), a.data(), len.data())));
        if (r) {
          if (r->type == REDIS_REPLY_ERROR) return redis_error(url, argv[0] + ": " + std::string(r->str, r->len));
          return r;
        }
        last = redis_error(url, std::string("connection lost: ") + ctx->errstr);
        redisFree(ctx);
        ctx = nullptr;
      }
      if (std::chrono::steady_clock::now() >= give_up)
        return Status(StatusCode::kIoError, last.message() + " (gave up after " + std::to_string(patience_ms / 1000) + " s)");
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1000u, 50u << std::min(attempt, 4u))));
    }
  }

  Result<Reply> eval(const char *script, std::vector<std::string> args) {
    args.insert(args.begin(), {"EVAL", script, "0"});
    return call(args);
  }
};

Result<std::unique_ptr<Changelog>> Changelog::connect(const std::string &url, uint64_t patience_ms) {
  auto impl = std::make_unique<Impl>();
  impl->url = url;
  impl->patience_ms = patience_ms;
  const std::string scheme = "redis://";
  if (url.compare(0, scheme.size(), scheme) != 0)
    return Status(StatusCode::kInvalidArgument, "'" + url + "' is not a redis://HOST:PORT[/DB] URL");
  std::string rest = url.substr(scheme.size());
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    const std::string d = rest.substr(slash + 1);
    if (!d.empty() && (d.find_first_not_of("0123456789") != std::string::npos || d.size() > 4))
      return Status(StatusCode::kInvalidArgument, "'" + url + "': the database after '/' must be a number");
    impl->db = d.empty() ? 0 : std::atoi(d.c_str());
    rest = rest.substr(0, slash);
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    const std::string p = rest.substr(colon + 1);
    if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos || std::atoi(p.c_str()) > 65535)
      return Status(StatusCode::kInvalidArgument, "'" + url + "': the port must be a number in 1..65535");
    impl->port = std::atoi(p.c_str());
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return Status(StatusCode::kInvalidArgument, "'" + url + "' names no host");
  impl->host = rest;
  // The first connection waits as long as a lost one would (a server restarting).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(patience_ms);
  for (Status st = impl->open(); !st.ok(); st = impl->open()) {
    if (std::chrono::steady_clock::now() >= give_up) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return std::unique_ptr<Changelog>(new Changelog(std::move(impl)));
}

Changelog::Changelog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Changelog::~Changelog() = default;

Status Changelog::init(const TreeConfig &c) {
  auto r = impl_->call({"HSET", std::string(kPrefix) + "config", "root", c.root, "ecc_dir", c.ecc_dir, "spec", c.spec,
                        "unit", std::to_string(c.unit), "delay_ms", std::to_string(c.delay_ms)});
  return r.ok() ? Status::Ok() : r.status();
}

Result<TreeConfig> Changelog::config() {
  auto r = impl_->call({"HMGET", std::string(kPrefix) + "config", "root", "ecc_dir", "spec", "unit", "delay_ms"});
  if (!r.ok()) return r.status();
  const redisReply *a = r->get();
  if (a->type != REDIS_REPLY_ARRAY || a->elements != 5 || a->element[0]->type == REDIS_REPLY_NIL)
    return Status(StatusCode::kInvalidArgument,
                  "no ECCFS tree in " + impl_->url + " (run ecjit eccfs init --redis URL --root DIR --ecc-dir DIR)");
  TreeConfig c;
  c.root = str(a->element[0]);
  c.ecc_dir = str(a->element[1]);
  c.spec = str(a->element[2]);
  c.unit = num(a->element[3]);
  c.delay_ms = num(a->element[4]);
  return c;
}

Status Changelog::notify(const std::string &path, bool removed, uint64_t offset, int64_t length, uint64_t now) {
  const std::string end = length < 0 ? "" : std::to_string(offset + uint64_t(length));
  auto r = impl_->eval(kNotify, {path, removed ? "delete" : "write", std::to_string(offset), end, std::to_string(now)});
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::vector<Job>> Changelog::lease(const std::string &worker, uint64_t now, uint64_t lease_ms, unsigned max_jobs) {
  auto r = impl_->eval(kLease, {worker, std::to_string(now), std::to_string(lease_ms), std::to_string(std::max(1u, max_jobs))});
  if (!r.ok()) return r.status();
  const redisReply *a = r->get();
  std::vector<Job> jobs;
  if (a->type != REDIS_REPLY_ARRAY) return jobs;
  if (a->elements % 5) return Status(StatusCode::kInternal, "redis " + impl_->url + ": a lease reply of " +
                                                                std::to_string(a->elements) + " fields");
  for (size_t i = 0; i < a->elements; i += 5) {
    Job j;
    j.path = str(a->element[i]);
    j.remove = str(a->element[i + 1]) == "delete";
    j.ranges = str(a->element[i + 2]);
    j.generation = num(a->element[i + 3]);
    j.first_ms = num(a->element[i + 4]);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

Result<bool> Changelog::extend(const Job &job, const std::string &worker, uint64_t now, uint64_t lease_ms) {
  auto r = impl_->eval(kExtend, {job.path, worker, std::to_string(now), std::to_string(lease_ms)});
  if (!r.ok()) return r.status();
  return num(r->get()) == 1;
}

Result<bool> Changelog::complete(const Job &job, const std::string &worker) {
  auto r = impl_->eval(kComplete, {job.path, worker, std::to_string(job.generation)});
  if (!r.ok()) return r.status();
  return num(r->get()) == 1;
}

Status Changelog::fail(const Job &job, const std::string &worker, const std::string &message, uint64_t retry_ms) {
  auto r = impl_->eval(kFail, {job.path, worker, message, std::to_string(retry_ms)});
  return r.ok() ? Status::Ok() : r.status();
}

Status Changelog::heartbeat(const std::string &worker, uint64_t now) {
  auto r = impl_->call({"ZADD", std::string(kPrefix) + "workers", std::to_string(now), worker});
  return r.ok() ? Status::Ok() : r.status();
}

Result<QueueStatus> Changelog::status(uint64_t now) {
  auto r = impl_->eval(kStatus, {std::to_string(now)});
  if (!r.ok()) return r.status();
  const redisReply *a = r->get();
  if (a->type != REDIS_REPLY_ARRAY || a->elements != 8)
    return Status(StatusCode::kInternal, "redis " + impl_->url + ": an unexpected status reply");
  QueueStatus s;
  s.pending = num(a->element[0]);
  s.due = num(a->element[1]);
  s.leased = num(a->element[2]);
  s.workers = num(a->element[3]);
  s.done = num(a->element[4]);
  s.failed = num(a->element[5]);
  s.expired = num(a->element[6]);
  const redisReply *first = a->element[7];
  if (first->type == REDIS_REPLY_INTEGER && first->integer >= 0) s.oldest_ms = int64_t(now) - first->integer;
  auto e = impl_->call({"LRANGE", std::string(kPrefix) + "errors", "0", "9"});
  if (e.ok() && (*e)->type == REDIS_REPLY_ARRAY)
    for (size_t i = 0; i < (*e)->elements; ++i) s.errors.push_back(str((*e)->element[i]));
  return s;
}

}  // namespace ecjit::eccfs
