"""Scripting beside Redis: EVAL / EVALSHA / EVAL_RO / EVALSHA_RO, SCRIPT LOAD / EXISTS /
FLUSH / HELP, the redis.* API, reply conversions both ways in RESP2 and RESP3, errors with
their user_script positions, the sandbox, shebang flags, SELECT inside scripts, and the
scripts applications run (a sliding-window rate limiter, a BullMQ-style move-to-active).

Busy scripts and SCRIPT KILL are in test_scripting_busy.py."""

import hashlib

import pytest

from harness import info_of


def sha(body: str) -> str:
    return hashlib.sha1(body.encode()).hexdigest()


def test_eval_arguments_and_errors(both):
    both("EVAL", "return {KEYS[1], KEYS[2], ARGV[1], #KEYS, #ARGV}", 2, "k1", "k2", "a1")
    both("EVAL", "return 1", 2, "k")
    both("EVAL", "return 1", -1)
    both("EVAL", "return 1", "x")
    both("EVAL", "return 1")
    both("EVALSHA", "0" * 40, 0)
    both("EVALSHA", "short", 0)
    both("EVALSHA_RO", "0" * 40, 0)
    both("EVAL", "return (", 0)
    both("EVAL", "end", 0)


def test_evalsha_and_script_subcommands(both):
    body = "return redis.call('incr', KEYS[1])"
    digest = both("SCRIPT", "LOAD", body)
    assert digest == sha(body).encode()
    both("EVALSHA", digest, 1, "counter")
    both("EVALSHA", digest.upper(), 1, "counter")
    both("EVALSHA_RO", digest, 1, "counter")
    both("SCRIPT", "EXISTS", digest, digest.upper(), "0" * 40)
    both("EVAL", "return 'cached by eval'", 0)
    both("SCRIPT", "EXISTS", sha("return 'cached by eval'"))
    both("SCRIPT", "LOAD", "return (")
    both("SCRIPT", "FLUSH", "SYNC")
    both("SCRIPT", "EXISTS", digest)
    both("SCRIPT", "FLUSH", "ASYNC")
    both("SCRIPT", "FLUSH")
    both("SCRIPT", "FLUSH", "LAZY")
    both("SCRIPT", "FLUSH", "SYNC", "ASYNC")
    both("SCRIPT", "KILL")
    r, g = both.run("SCRIPT", "HELP")
    # 7.2 says "Print this help." where 7.0 says "Prints this help."
    assert r[:-1] == g[:-1] and g[-1] == b"    Print this help."
    both("SCRIPT", "NOSUCH")
    both("SCRIPT", "LOAD")
    both("SCRIPT", "EXISTS")
    both("SCRIPT")


@pytest.mark.parametrize(
    "body",
    [
        "return 1",
        "return 3.99",
        "return -3.99",
        "return 'str'",
        "return true",
        "return false",
        "return nil",
        "return {}",
        "return {1, 2, nil, 3}",
        "return {1, {2, {3, 'x'}}, 'a', true, false}",
        "return {ok='fine'}",
        "return {ok='a\\r\\nb'}",
        "return {err='My Error text'}",
        "return {err='-WEIRD'}",
        "return redis.status_reply('QUEUED')",
        "return redis.error_reply('MYCODE the message')",
        "return redis.error_reply('no code')",
        "return redis.error_reply('-X')",
        "return redis.error_reply(1)",
        "return redis.status_reply()",
        "return {double=3.25}",
        "return {big_number='123456789012345678901234567890'}",
        "return {verbatim_string={format='txt', string='hello'}}",
        "return {map={a=1}}",
        "return {set={x=true}}",
        "return function() end",
        "return redis.call('get', 'nokey')",
        "return redis.call('zrange', 'nokey', 0, -1)",
        "return redis.call('ping')",
        "return redis.call('echo', 'hi')",
        "return {redis.call('set', 'k', 'v'), redis.call('get', 'k'), redis.call('incr', 'n')}",
        "return redis.call('set', 'k', 3.5)",
        "return redis.call('set', 'k', 0.1) and redis.call('get', 'k')",
        "return type(redis.call('get', 'nokey'))",
        "return type(redis.call('ping'))",
        "return redis.call('ping').ok",
        "return redis.pcall('incrby', 'k', 'x').err",
        "return redis.pcall('incrby', 'k', 'x')",
    ],
)
def test_conversions_resp2(both, body):
    both("EVAL", body, 0)


@pytest.mark.parametrize(
    "body",
    [
        "return true",
        "return false",
        "return {double=3.25}",
        "return {big_number='1234567890123456789012345'}",
        "return {map={a=1}}",
        "return {set={x=true}}",
        "return {verbatim_string={format='txt', string='hello'}}",
        "redis.setresp(3) return true",
        "redis.setresp(3) return false",
        "redis.setresp(3) return redis.call('get', 'nokey') == nil",
        "redis.setresp(3) return redis.call('hello', '3')",
        "redis.setresp(3) return redis.call('zscore', 'z', 'a')",
        "redis.setresp(3) return redis.call('zscore', 'z', 'a').double",
        "redis.setresp(3) return type(redis.call('zscore', 'z', 'a'))",
        "redis.setresp(3) return redis.call('smembers', 's').set.m",
        "redis.setresp(3) return redis.call('config', 'get', 'maxmemory')",
        "redis.setresp(3) return redis.call('exists', 'z')",
        "redis.setresp(2) return redis.call('zscore', 'z', 'a')",
    ],
)
def test_conversions_resp3(both3, body):
    both3("ZADD", "z", 1.5, "a")
    both3("SADD", "s", "m")
    both3("EVAL", body, 0)
    both3("DEL", "z", "s")


def test_conversions_resp3_into_a_resp2_caller(both):
    both("ZADD", "z", 1.5, "a")
    both("EVAL", "redis.setresp(3) return redis.call('zscore', 'z', 'a')", 0)
    both("EVAL", "redis.setresp(3) return true", 0)
    both("EVAL", "redis.setresp(3) return false", 0)


@pytest.mark.parametrize(
    "body",
    [
        "x = 1",
        "return undefined_name",
        "\n\nreturn nosuch",
        "error('boom')",
        "error({err='TABLED err'})",
        "string.x = 1",
        "redis.x = 1",
        "_G.x = 1",
        "rawset(_G, 'x', 1)",
        "setmetatable(_G, {})",
        "return _G.undefined",
        "os.exit(1)",
        "return io.open('/etc/passwd')",
        "return loadfile('/etc/passwd')",
        "return dofile('/etc/passwd')",
        "return print",
        "return require",
        "return debug.getinfo(1)",
        "return module",
        "return type(loadstring)",
        "return loadstring('return 1 + 1')()",
        "loadstring('x = 1')()",
        "return type(__redis__err__handler)",
        "return table.concat({string.upper('a'), math.floor(2.5), tostring(#'abc')}, ',')",
        "return ('abc'):upper()",
        "return coroutine.wrap(function() coroutine.yield(7) end)()",
        "return select('#', 1, 2, 3)",
        "return unpack({1, 2})",
        "return pcall(error, 'x')",
        "return {pcall(redis.call, 'nosuch')}",
        "return {pcall(redis.call, 'incrby', 'k', 'x')}",
        "local t = {} t[1] = 1 return t",
        "return #KEYS",
        "KEYS[1] = 'changed' return KEYS[1]",
    ],
)
def test_sandbox(both, body):
    both("EVAL", body, 0)


@pytest.mark.parametrize(
    "body",
    [
        "return redis.call('nosuch')",
        "return redis.call('nosuch', 'a')",
        "return redis.pcall('nosuch')",
        "return redis.call('get')",
        "return redis.call('config')",
        "return redis.call('config', 'nope')",
        "return redis.call()",
        "return redis.call({})",
        "return redis.call('set', 'k', {})",
        "return redis.call('set', 'k', true)",
        "return redis.call('eval', 'return 1', 0)",
        "return redis.call('script', 'load', 'return 1')",
        "return redis.call('multi')",
        "return redis.call('subscribe', 'c')",
        "return redis.call('client', 'id')",
        "redis.call('set', 'str', 'x') return redis.call('incr', 'str')",
        "redis.call('set', 'str', 'x') return redis.call('zadd', 'str', 1, 'a')",
        "\nlocal a = 1\nreturn redis.call('incrby', 'k', 'notanumber')",
        "return redis.sha1hex()",
        "return redis.sha1hex('a', 'b')",
        "return redis.setresp()",
        "return redis.setresp(4)",
        "return redis.set_repl(8)",
        "return redis.log(1)",
        "return redis.log('x', 'y')",
        "return redis.log(9, 'y')",
        "return math.random(0)",
        "return math.random(5, 1)",
        "return math.random('x')",
        "return math.random(1, 2, 3)",
        "return redis.acl_check_cmd('nosuch')",
    ],
)
def test_errors_as_redis_words_them(both, body):
    both("EVAL", body, 0)


def test_redis_api(both):
    both("EVAL", "return redis.sha1hex('')", 0)
    both("EVAL", "return redis.sha1hex('Pizza & Mandolino')", 0)
    both("EVAL", "return redis.sha1hex(12)", 0)
    both("EVAL", "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}", 0)
    both("EVAL", "return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}", 0)
    both("EVAL", "return redis.log(redis.LOG_WARNING, 'from a script', 1)", 0)
    both("EVAL", "redis.set_repl(redis.REPL_ALL) return redis.set_repl(redis.REPL_NONE)", 0)
    both("EVAL", "return redis.replicate_commands()", 0)
    both("EVAL", "return redis.breakpoint()", 0)
    both("EVAL", "return redis.debug('x')", 0)
    both("EVAL", "return redis.acl_check_cmd('get', 'k')", 0)
    both("EVAL", "return type(redis.REDIS_VERSION) .. type(redis.REDIS_VERSION_NUM)", 0)
    both("EVAL", "redis.setresp(3) redis.setresp(2) return redis.call('zscore', 'nokey', 'a')", 0)
    both("EVAL", "math.randomseed(42) return {math.random(), math.random(100), math.random(5, 10)}", 0)


def test_version_is_the_one_goblin_follows(servers):
    """Goblin follows 7.2: redis.REDIS_VERSION is its version (Goblin-only check)."""
    import redis as redispy

    c = redispy.Redis(port=servers.goblin.port)
    assert c.eval("return redis.REDIS_VERSION", 0) == b"7.2.4"
    assert c.eval("return redis.REDIS_VERSION_NUM", 0) == 0x070204
    c.close()


def test_select_inside_a_script_moves_only_the_script(both):
    both("SELECT", 1)
    both("SET", "k", "db1")
    both("EVAL", "redis.call('select', 0) redis.call('set', 'k', 'db0') return redis.call('get', 'k')", 0)
    both("GET", "k")
    both("EVAL", "return redis.call('get', 'k')", 0)
    both("SELECT", 0)
    both("GET", "k")
    both("EVAL", "return redis.call('select', 99)", 0)


def test_read_only_scripts(both):
    both("SET", "k", "v")
    both("EVAL_RO", "return redis.call('get', 'k')", 1, "k")
    both("EVAL_RO", "return redis.call('set', 'k', 'w')", 1, "k")
    both("EVAL_RO", "return redis.pcall('del', 'k')", 1, "k")
    both("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'k', 'w')", 1, "k")
    both("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", 1, "k")
    both("EVAL_RO", "#!lua\nreturn 1", 0)
    both("EVAL_RO", "#!lua flags=no-writes\nreturn 1", 0)
    digest = both("SCRIPT", "LOAD", "return redis.call('del', KEYS[1])")
    both("EVALSHA_RO", digest, 1, "k")
    both("GET", "k")


@pytest.mark.parametrize(
    "body",
    [
        "#!lua\nreturn 1",
        "#!lua flags=no-writes,allow-oom\nreturn 2",
        "#!lua flags=allow-stale,no-cluster\nreturn 3",
        "#!lua flags=no-writes\n\nerror('line three')",
        "#!lua",
        "#!python\nreturn 1",
        "#!lua flags=nope\nreturn 1",
        "#!lua name=x\nreturn 1",
        "#! \nreturn 1",
        "#!lua flags=\nreturn 4",
        "#!lua flags=no-writes,\nreturn 5",
        "#!lua flags=,\nreturn 6",
    ],
)
def test_shebang(both, body):
    both("EVAL", body, 0)


def test_cross_slot_flag_on_goblin(servers):
    """allow-cross-slot-keys arrived in 7.2 (Redis 7.0 refuses it): pinned to 7.2's
    documented behaviour, on Goblin only."""
    import redis as redispy

    c = redispy.Redis(port=servers.goblin.port)
    assert c.eval("#!lua flags=allow-cross-slot-keys\nreturn 1", 0) == 1
    c.close()


def test_oom_refusals(both):
    both("SET", "k", "v")
    both.config_set("maxmemory", 1)
    both("EVAL", "return redis.call('get', 'k')", 0)
    both("EVAL", "return redis.call('set', 'k2', 'v')", 0)
    both("EVAL", "redis.call('del', 'nokey') return redis.call('incr', 'n')", 0)
    both("EVAL", "#!lua\nreturn 1", 0)
    both("SCRIPT", "EXISTS", sha("#!lua\nreturn 1"))
    both("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'k3', 'v')", 0)
    # no-writes implies allow-oom (Redis 7.0 and 7.2.4 alike: scriptPrepareForRun).
    both("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", 0)
    both.config_set("maxmemory", 0)


def test_scripts_and_transactions(both):
    both("MULTI")
    both("EVAL", "return redis.call('incr', KEYS[1])", 1, "n")
    both("EVAL", "return redis.call('incr', KEYS[1])", 1, "n")
    both("EXEC")
    both("GET", "n")


def test_commandstats_count_the_commands_of_scripts(both):
    both("CONFIG", "RESETSTAT")
    both("SCRIPT", "FLUSH")
    both("EVAL", "redis.call('set', 'k', 'v') redis.call('get', 'k') return redis.pcall('incr', 'k')", 0)
    both("EVAL", "return redis.call('nosuch')", 0)
    r, g = (info_of(c, "commandstats") for c in both.clients())
    for name in ("cmdstat_eval", "cmdstat_set", "cmdstat_get", "cmdstat_incr"):
        keep = lambda s: [f for f in s.split(",") if not f.startswith("usec")]
        assert keep(r[name]) == keep(g[name]), name
    r, g = (info_of(c, "errorstats") for c in both.clients())
    assert r == g
    r, g = (info_of(c, "memory") for c in both.clients())
    assert r["number_of_cached_scripts"] == g["number_of_cached_scripts"] == 2
    assert int(g["used_memory_lua"]) > 0 and int(g["used_memory_scripts_eval"]) > 0


def test_busy_reply_threshold_parameter(both):
    both("CONFIG", "GET", "busy-reply-threshold")
    both("CONFIG", "GET", "lua-time-limit")
    both.config_set("lua-time-limit", 1234)
    both("CONFIG", "GET", "busy-reply-threshold")
    both("CONFIG", "SET", "busy-reply-threshold", "-1")
    both("CONFIG", "SET", "busy-reply-threshold", "x")


SLIDING_WINDOW = """
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
  return {1, limit - count - 1}
end
return {0, 0}
"""


def test_sliding_window_rate_limiter(both):
    digest = both("SCRIPT", "LOAD", SLIDING_WINDOW)
    for i in range(8):
        both("EVALSHA", digest, 1, "rl:user", 1000 + i * 100, 500, 3, f"req{i}")
    both("ZRANGE", "rl:user", 0, -1, "WITHSCORES")
    both("EVAL", "return redis.call('PTTL', KEYS[1]) > 0", 1, "rl:user")


MOVE_TO_ACTIVE = """
local jobId = redis.call('ZPOPMIN', KEYS[1])
if #jobId == 0 then return false end
local id = jobId[1]
redis.call('SET', KEYS[2] .. id, ARGV[1])
redis.call('EXPIRE', KEYS[2] .. id, ARGV[2])
redis.call('SADD', KEYS[3], id)
return {id, jobId[2]}
"""


def test_bullmq_style_move_to_active(both):
    both("ZADD", "q:wait", 3, "job3", 1, "job1", 2, "job2")
    for _ in range(4):
        both("EVAL", MOVE_TO_ACTIVE, 3, "q:wait", "q:lock:", "q:active", "worker-1", 30)
    both("EVAL", "local m = redis.call('SMEMBERS', KEYS[1]) table.sort(m) return m", 1, "q:active")
    both("GET", "q:lock:job2")
    both("TTL", "q:lock:job1")


# The libraries Redis embeds: cjson, cmsgpack, bit, struct. Each case's reply (or error,
# with its position and wording) must be Redis's.
LIBRARY_CASES = [
    # bit (LuaBitOp)
    "return {bit.tobit(0xffffffff), bit.tobit(2^32 + 5), bit.tobit(-1), bit.tobit(2.5), bit.tobit(3.5), bit.tobit('12')}",
    "return {bit.tohex(255), bit.tohex(255, -2), bit.tohex(0x12345678, 12), bit.tohex(-1, 3), bit.tohex(1, 0)}",
    "return {bit.bnot(0), bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4), bit.bxor(5, 3), bit.band(7)}",
    "return {bit.lshift(1, 31), bit.lshift(1, 32), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.rol(0x80000001, 1), bit.ror(3, 1), bit.bswap(0x12345678)}",
    "return bit.tobit()",
    "return bit.tobit('x')",
    "return bit.band(1, {})",
    "local f = bit.tobit return f()",
    "return bit.tohex(1, nil)",
    "return {pcall(bit.tobit)}",
    "bit.x = 1",
    # struct
    "return struct.pack('>i', 1)",
    "return struct.pack('<I2 b B h H l L', 513, -1, 255, -2, 65535, -3, 7)",
    "return struct.pack('!4 b i d f', 1, 2, 1.5, 0.25)",
    "return struct.pack('s c3 c0 x', 'ab', 'xyz', 'whole')",
    "return struct.pack('i16', -1)",
    "return {struct.unpack('>i', struct.pack('>i', -5))}",
    "return {struct.unpack('<I2 b', '\\1\\2\\255')}",
    "return {struct.unpack('s s', 'ab\\0cd\\0')}",
    "return {struct.unpack('b c0', '\\3abcd')}",
    "return {struct.unpack('i', 'abcdefgh', 5)}",
    "return {struct.unpack('!4 b i', struct.pack('!4 b i', 1, 2))}",
    "return {struct.unpack('d', struct.pack('d', 0.1))}",
    "return {struct.size('i'), struct.size('!8 b d'), struct.size('b d'), struct.size('c10 h')}",
    "return struct.pack('i')",
    "return struct.pack('ii', 1)",
    "return struct.pack('z', 1)",
    "return struct.pack('i33', 1)",
    "return struct.pack('!3 i', 1)",
    "return struct.pack('c5', 'ab')",
    "return struct.pack('i99999999999', 1)",
    "return struct.unpack('i', 'ab')",
    "return struct.unpack('i', 'abcd', 0)",
    "return struct.unpack('s', 'ab')",
    "return struct.unpack('c0', 'ab')",
    "return struct.size('s')",
    "return struct.size('c0')",
    "return struct.unpack()",
    # cjson
    "return cjson.encode({1, 2, 'three', true, false})",
    "return cjson.encode({a = 1, b = {c = 'd'}, [10] = 'ten', [1.5] = 'x'})",
    "return cjson.encode({})",
    "return cjson.encode({0.1, 1/3, 1e20, 1e-5, -0, 100, 2^53, 3.14159265358979})",
    "return cjson.encode('quote\" slash/ back\\\\ ctl\\1\\31\\127 nl\\n tab\\t é')",
    "return cjson.encode({[1] = 1, [3] = 3})",
    "return cjson.encode({[1] = 1, [20] = 20})",
    "return cjson.encode(1/0)",
    "return cjson.encode({[true] = 1})",
    "return cjson.encode(function() end)",
    "return cjson.encode()",
    "return cjson.encode(1, 2)",
    "return cjson.encode(cjson.null)",
    "local t = {} t[1] = t return cjson.encode(t)",
    "return cjson.decode('[1, 2.5, \"x\", true, false, null]')[6] == cjson.null",
    "return cjson.decode('{\"a\": [1, {\"b\": \"c\"}], \"d\": -0.5e2}').a[2].b",
    "return cjson.encode(cjson.decode('{\"k\": [1, 2, {\"x\": null}], \"n\": 1e300}'))",
    "return cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\\\\n\\\\/\"')",
    "return {cjson.decode('0x10'), cjson.decode('  12  '), cjson.decode('-1.5E+3'), cjson.decode('1e')}",
    "return cjson.decode('')",
    "return cjson.decode('x')",
    "return cjson.decode('[1,')",
    "return cjson.decode('[1 2]')",
    "return cjson.decode('{1:2}')",
    "return cjson.decode('{\"a\" 2}')",
    "return cjson.decode('{\"a\":1,}')",
    "return cjson.decode('\"abc')",
    "return cjson.decode('\"\\\\x\"')",
    "return cjson.decode('\"\\\\ud800\"')",
    "return cjson.decode('1 2')",
    "return cjson.decode('-')",
    "return cjson.decode('+1')",
    "return cjson.decode('nul')",
    "return cjson.decode('truex')",
    "return cjson.decode('01')",
    "return cjson.decode(123)",
    "return cjson.decode({})",
    "return cjson.decode()",
    "return cjson.decode('[' .. string.rep('[', 1000) .. string.rep(']', 1001))",
    "return {cjson.encode_max_depth(), cjson.decode_max_depth(), cjson.encode_number_precision(), cjson.encode_keep_buffer(), cjson.encode_invalid_numbers(), cjson.decode_invalid_numbers()}",
    "return {cjson.encode_sparse_array()}",
    "return cjson.encode_max_depth(0)",
    "return cjson.encode_number_precision(15)",
    "return cjson.encode_invalid_numbers('maybe')",
    "return cjson.encode_keep_buffer(1, 2)",
    "return cjson.encode_max_depth('x')",
    "return {cjson._NAME, cjson._VERSION, type(cjson.new), type(cjson.null)}",
    "local c = cjson.new() c.encode_number_precision(3) c.encode_invalid_numbers('null') c.encode_sparse_array(true) return {c.encode(math.pi), c.encode(1/0), c.encode({[1]=1, [20]=2}), cjson.encode(math.pi)}",
    "local c = cjson.new() c.encode_invalid_numbers(true) c.decode_invalid_numbers(false) return {c.encode(1/0), c.encode(-1/0), pcall(c.decode, '0x10')}",
    "local c = cjson.new() c.encode_max_depth(2) return c.encode({{{1}}})",
    "local c = cjson.new() c.decode_max_depth(2) return c.decode('[[[1]]]')",
    # cmsgpack
    "return cmsgpack.pack(1, -1, 200, -200, 70000, -70000, 2^40, -2^40, 1.5, 0.1, 'str', true, false)",
    "return cmsgpack.pack({1, 2, 3}, {a = 1}, {}, string.rep('x', 40), string.rep('y', 300))",
    "return cmsgpack.pack({[1] = 1, [3] = 3})",
    "local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return cmsgpack.pack(t)",
    "return cmsgpack.pack(function() end, nil)",
    "return cmsgpack.pack()",
    "return {cmsgpack.unpack(cmsgpack.pack(1, 'two', {3, {four = 4}}, 5.5, true))}",
    "return cmsgpack.unpack(cmsgpack.pack({a = {b = {c = 'deep'}}})).a.b.c",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 9)}",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -1)}",
    "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
    "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0)}",
    "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 5, 1)}",
    "return {cmsgpack.unpack('\\204\\1\\2\\3')}",
    "return cmsgpack.unpack('\\146\\1')",
    "return cmsgpack.unpack('\\193')",
    "return cmsgpack.unpack('\\129\\192\\1')",
    "return cmsgpack.unpack()",
    "return {cmsgpack.unpack('')}",
    "return {cmsgpack.unpack('\\202\\63\\192\\0\\0\\203\\63\\185\\153\\153\\153\\153\\153\\154\\207\\0\\0\\1\\0\\0\\0\\0\\0\\211\\255\\255\\255\\255\\255\\255\\255\\255')}",
    "return {cmsgpack._VERSION, cmsgpack._NAME}",
    # Numbers where strings are wanted convert as Lua's %.14g.
    "return cjson.decode(123456789012345678)",
    "return redis.sha1hex(123456789012345678)",
    "return {struct.unpack('b', 1)}",
    "return {cmsgpack.unpack(123)}",
]


@pytest.mark.parametrize("body", LIBRARY_CASES)
def test_embedded_libraries(both, body):
    both("EVAL", body, 0)


@pytest.mark.parametrize("body", LIBRARY_CASES[:40])
def test_embedded_libraries_resp3(both3, body):
    both3("EVAL", "redis.setresp(3) " + body, 0)


LIBRARY_EDGE_CASES = [
    "return struct.size('>!4 i b')",
    "return struct.size('z')",
    "return struct.size('!3')",
    "return struct.pack('>!2 h i', 1, 2)",
    "return {struct.unpack('>I3', '\\1\\2\\3')}",
    "return {struct.unpack('i9', string.rep('\\255', 9))}",
    "return {struct.unpack('I9', string.rep('\\255', 9))}",
    "return struct.pack('I9 i9', -1, 300)",
    "return {struct.unpack('f', struct.pack('f', 0.1))}",
    "return cjson.encode({['a\\0b'] = 1})",
    "return cjson.encode(string.rep('\\200', 3))",
    "return cjson.decode('[1]\\0garbage')[1]",
    "return cjson.decode('\"a\\0b\"')",
    "return cjson.decode('\"\\1\"')",
    "return {cjson.decode('Infinity') > 0, cjson.decode('-inf') < 0, cjson.decode('nan') ~= cjson.decode('nan')}",
    "return cjson.encode(cjson.decode('[1e400, -1e400]'))",
    "return cjson.encode({cjson.decode('1E2'), cjson.decode('0.000001'), cjson.decode('123456789012345678')})",
    "return cjson.encode({[-1] = 'neg', [0] = 'zero'})",
    "return cjson.encode({1, 2, nil, 4})",
    "return cjson.encode({n = 0/0})",
    # On instances of their own: cjson's settings last for the server's life.
    "local c = cjson.new() local ok, e = pcall(c.encode_sparse_array, true, 3, 'x') "
    "local a, b, d = c.encode_sparse_array() return {tostring(ok), e, tostring(a), b, d}",
    "local c = cjson.new() return {c.encode_sparse_array(nil, nil, 0)}",
    "return cmsgpack.pack(0/0, 1/0, -1/0, -0)",
    "return cmsgpack.pack({[1.5] = 1, [-1] = 2, [0] = 3})",
    "return cmsgpack.pack(2^63, -2^63, 2^64)",
    "return {cmsgpack.unpack(cmsgpack.pack(2^63, -2^63))}",
    "return {cmsgpack.unpack_one('\\1\\2', 2)}",
    "return {cmsgpack.unpack_one('\\1\\2', 3)}",
    "return {cmsgpack.unpack_limit('\\1\\2', -1)}",
    "return cmsgpack.unpack('\\217\\3ab')",
    "return cmsgpack.unpack('\\196\\1a')",
    "return {cmsgpack.unpack('\\217\\3abc\\218\\0\\1z\\219\\0\\0\\0\\1w')}",
    "return {cmsgpack.unpack('\\220\\0\\2\\1\\2\\222\\0\\1\\161k\\161v')}",
]


DEPTH = ("local ok, t = pcall(%s) "
         "return tostring(ok) .. ' ' .. (type(t) == 'string' and #t < 200 and t or type(t))")
# Nesting where Redis's Lua stack (8000 slots) or the depth settings stop each library.
LIBRARY_EDGE_CASES += [
    DEPTH % "cmsgpack.unpack, string.rep(string.char(145), 3999) .. string.char(1)",
    DEPTH % "cmsgpack.unpack, string.rep(string.char(145), 4000) .. string.char(1)",
    DEPTH % "cmsgpack.unpack, string.rep(string.char(129, 1), 3999) .. string.char(1)",
    DEPTH % "cmsgpack.unpack, string.rep(string.char(129, 1), 4000) .. string.char(1)",
    DEPTH % "cmsgpack.unpack, string.rep(string.char(145, 129), 3999) .. string.char(1, 1)",
    "return #{cmsgpack.unpack(string.rep(string.char(1), 7998))}",
    "local t = {} for i = 1, 6000 do t['k' .. i] = 'v' .. i end local s = cmsgpack.pack(t) "
    "local n = 0 for k in pairs(cmsgpack.unpack(s)) do n = n + 1 end return {#s, n, #cjson.encode(t)}",
    "local t = {} for i = 1, 4000 do t[i] = 's' .. i end return #cmsgpack.pack(unpack(t))",
    "local t = {} for i = 1, 4001 do t[i] = 's' .. i end return #cmsgpack.pack(unpack(t))",
    "local t = {} for i = 1, 3000 do t[i] = 's' .. i end local r = {cmsgpack.unpack(cmsgpack.pack(unpack(t)))} return {#r, r[2999]}",
    DEPTH % "cmsgpack.unpack, string.rep(string.char(1), 8000)",
    DEPTH % "cjson.decode, string.rep('[', 1000) .. string.rep(']', 1000)",
    DEPTH % "cjson.decode, string.rep('[', 1001) .. string.rep(']', 1001)",
    "local c = cjson.new() c.decode_max_depth(100000) " + DEPTH % "c.decode, string.rep('{\"a\":', 3999) .. '1' .. string.rep('}', 3999)",
    "local c = cjson.new() c.decode_max_depth(100000) " + DEPTH % "c.decode, string.rep('{\"a\":', 4000) .. '1' .. string.rep('}', 4000)",
    "local c = cjson.new() c.decode_max_depth(100000) " + DEPTH % "c.decode, string.rep('[', 5000) .. string.rep(']', 5000)",
    "local t = {} local x = t for i = 2, 1000 do x[1] = {} x = x[1] end " + DEPTH % "cjson.encode, t",
    "local t = {} local x = t for i = 2, 1001 do x.k = {} x = x.k end " + DEPTH % "cjson.encode, t",
    "local c = cjson.new() c.encode_max_depth(100000) local t = {} local x = t for i = 2, 3000 do x[1] = {} x = x[1] end " + DEPTH % "c.encode, t",
]


@pytest.mark.parametrize("body", LIBRARY_EDGE_CASES)
def test_embedded_libraries_edges(both, body):
    both("EVAL", body, 0)


def test_embedded_libraries_in_functions(both):
    """A library's functions see the same libraries (and not at load time)."""
    both("FUNCTION", "FLUSH")
    both(
        "FUNCTION", "LOAD",
        "#!lua name=libs\nredis.register_function('enc', function(keys, args) "
        "return {cjson.encode(cjson.decode(args[1])), bit.tohex(tonumber(args[2])), "
        "struct.pack('>I2', tonumber(args[2])), cmsgpack.pack(args[1])} end)",
    )
    both("FCALL", "enc", 0, '{"a":[1,2,null]}', 258)
    both("FUNCTION", "LOAD", "#!lua name=early\nlocal x = cjson.encode({})")
    both("FUNCTION", "FLUSH")


def _random_json(rng, depth=0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice(["null", "true", "false"])
    if kind == 1:
        return str(rng.randint(-10**20, 10**20))
    if kind == 2:
        return repr(rng.uniform(-1e6, 1e6)) + rng.choice(["", "e10", "E-3", "e+300"])
    if kind == 3:
        return rng.choice(["0.1", "-0", "1e400", "0x1F", "+1", "01", "-.5", "1.", "Infinity", "nan", "-inf"])
    if kind in (4, 5):
        chars = [rng.choice(['a', 'é', '\\n', '\\"', '\\\\', '\\/', '\\u00e9', '\\ud83d\\ude00', '\\t', ' ', '\\u0001', 'z'])
                 for _ in range(rng.randrange(6))]
        return '"' + "".join(chars) + '"'
    if kind in (6, 7):
        return "[" + ",".join(_random_json(rng, depth + 1) for _ in range(rng.randrange(5))) + "]"
    items = [f'"k{rng.randrange(20)}":{_random_json(rng, depth + 1)}' for _ in range(rng.randrange(5))]
    return "{" + ",".join(items) + "}"


def _mutate(rng, text):
    for _ in range(rng.randrange(3)):
        if not text:
            break
        i = rng.randrange(len(text))
        op = rng.randrange(3)
        if op == 0:
            text = text[:i] + text[i + 1:]
        elif op == 1:
            text = text[:i] + rng.choice('[]{},:"\\ 0e-x') + text[i:]
        else:
            text = text[:i] + text[i] * 2 + text[i:]
    return text


BATCH = """
local out = {}
for i, s in ipairs(ARGV) do
  local ok, r = pcall(function() %s end)
  out[i] = ok and r or ('ERR ' .. tostring(r))
end
return out
"""


def test_cjson_random_documents(both):
    import random

    rng = random.Random(18)
    body = BATCH % "local v = cjson.decode(s) return cjson.encode(v) .. ' ' .. cmsgpack.pack(v)"
    for _ in range(60):
        docs = []
        for _ in range(25):
            doc = _random_json(rng)
            docs.append(_mutate(rng, doc) if rng.random() < 0.5 else doc)
        both("EVAL", body, 0, *docs)


def test_cmsgpack_random_bytes(both):
    import random

    rng = random.Random(7)
    body = BATCH % (
        "local t = {cmsgpack.unpack(s)} local parts = {} "
        "for j, v in ipairs(t) do parts[j] = cmsgpack.pack(v) end "
        "return table.concat(parts, '|') .. '#' .. #t"
    )
    interesting = [0x00, 0x7f, 0x80, 0x81, 0x90, 0x91, 0xa0, 0xa3, 0xc0, 0xc2, 0xc3, 0xca, 0xcb,
                   0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3, 0xd9, 0xda, 0xdb, 0xdc, 0xdd,
                   0xde, 0xdf, 0xe0, 0xff, 0xc1, 0xc4]
    for _ in range(60):
        blobs = []
        for _ in range(25):
            n = rng.randrange(1, 14)
            blobs.append(bytes(rng.choice(interesting) if rng.random() < 0.6 else rng.randrange(256)
                               for _ in range(n)))
        both("EVAL", body, 0, *blobs)


def test_struct_and_bit_random(both):
    import random

    rng = random.Random(3)
    body = BATCH % (
        "local fmt, data = s:match('^(.-)|(.*)$') "
        "local r = {struct.unpack(fmt, data)} "
        "return table.concat(r, ',') .. ';' .. struct.size(fmt) .. ';' .. "
        "bit.tohex(bit.bxor(#data * 12345, struct.size(fmt)), -8)"
    )
    opts = ["b", "B", "h", "H", "i", "I", "l", "L", "i3", "I5", "f", "d", "x", "c2", "<", ">", "!", "!2", "!4", " ", "T"]
    for _ in range(60):
        cases = []
        for _ in range(25):
            fmt = "".join(rng.choice(opts) for _ in range(rng.randrange(1, 5)))
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 24)))
            cases.append(fmt.encode() + b"|" + data)
        both("EVAL", body, 0, *cases)
    numbers = [rng.choice([rng.uniform(-1e10, 1e10), rng.randint(-2**40, 2**40), rng.random() * 8])
               for _ in range(60)]
    bit_body = BATCH % (
        "local n = tonumber(s) return table.concat({bit.tobit(n), bit.bnot(n), bit.lshift(n, n), "
        "bit.arshift(n, 3), bit.rol(n, 7), bit.ror(n, 30), bit.bswap(n), bit.tohex(n), bit.tohex(n, -4)}, ',')"
    )
    both("EVAL", bit_body, 0, *[repr(float(n)) for n in numbers])


RANDOM_VALUES = """
math.randomseed(tonumber(ARGV[1]))
local function value(depth)
  local k = math.random(1, depth < 4 and 10 or 6)
  if k == 1 then return math.random(-1000, 1000) end
  if k == 2 then return (math.random() - 0.5) * 10 ^ math.random(-30, 30) end
  if k == 3 then return string.rep(string.char(math.random(0, 255)), math.random(0, 3)) .. 'é/"' end
  if k == 4 then return math.random(0, 1) == 1 end
  if k == 5 then return 2 ^ math.random(0, 70) * (math.random(0, 1) * 2 - 1) end
  if k == 6 then return cjson.null end
  local t = {}
  local n = math.random(0, 6)
  for i = 1, n do
    local kind = math.random(1, 4)
    if kind == 1 then t[i] = value(depth + 1)
    elseif kind == 2 then t[math.random(1, 30)] = value(depth + 1)
    elseif kind == 3 then t['k' .. math.random(1, 50)] = value(depth + 1)
    else t[math.random(-3, 3) + 0.5] = value(depth + 1) end
  end
  return t
end
local out = {}
for i = 1, 40 do
  local v = value(0)
  local ok, j = pcall(cjson.encode, v)
  local ok2, m = pcall(cmsgpack.pack, v)
  out[i] = tostring(ok) .. ' ' .. tostring(j) .. ' ' .. tostring(ok2) .. ' ' .. tostring(m)
end
return out
"""


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7, 8])
def test_cjson_and_cmsgpack_of_random_values(both, seed):
    both("EVAL", RANDOM_VALUES, 0, seed)


# --- Bytecode (CVE-2015-4335) ------------------------------------------------------------------

DUMPED = "string.dump(function() return 1 end)"


def test_bytecode_is_refused_everywhere_a_chunk_loads(both):
    """Redis's Lua parses every chunk as text: bytecode is a syntax error at its first byte."""
    both("EVAL", f"local f, e = loadstring({DUMPED}) return {{tostring(f), e}}", 0)
    both("EVAL", f"local f, e = loadstring({DUMPED}, 'named') return {{tostring(f), e}}", 0)
    both(
        "EVAL",
        f"local s, done = {DUMPED}, false "
        "local f, e = load(function() if done then return nil end done = true return s end) "
        "return {tostring(f), e}",
        0,
    )
    both(
        "EVAL",
        f"local s, i = {DUMPED}, 0 "
        "local f, e = load(function() i = i + 1 return s:sub(i, i) end, 'bytes') "
        "return {tostring(f), e}",
        0,
    )
    both("EVAL", "return loadstring('return 1 + 1')()", 0)
    both("EVAL", "\x1bLuaQ\x00\x01\x04", 0)
    both("FUNCTION", "LOAD", "#!lua name=dumped\n\x1bLuaQ\x00")
    both(
        "FUNCTION", "LOAD",
        "#!lua name=dumper\nredis.register_function('f', function() "
        f"local f, e = loadstring({DUMPED}) return {{tostring(f), e}} end)",
    )
    both("FCALL", "f", 0)
    both("FUNCTION", "FLUSH")
