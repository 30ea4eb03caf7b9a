-- The sandbox, run once on a fresh interpreter (chunk "=sandbox"), as Redis's script_lua.c
-- sets it up. Arguments: the `redis` functions written in Rust, the Redis version, its
-- number, and for the functions engine the `redis` functions of a library's load
-- (register_function). Returns the runner (xpcall with Redis's error handler), the table
-- that holds the globals, and for the functions engine the switch between the globals and
-- the load-time ones (Redis's function_lua.c: while FUNCTION LOAD runs a library, the
-- globals are only `redis` with register_function, log, the LOG_ levels and the version).
--
-- The Rust functions raise their errors as Redis's C functions do (so a `return
-- redis.call(...)` keeps the script's frame for the error's line); the error value they
-- raise (Redis's error table, or a message) waits in api.take_error for the handler and
-- for pcall, which see an opaque userdata in its place.
--
-- Redis's Lua has read-only tables; stock Lua 5.1 does not. Each protected table is
-- emptied, its entries moved to a backing table that its metatable reads through, and
-- writes into it raise Redis's "Attempt to modify a readonly table". The globals' backing
-- table raises "Script attempted to access nonexistent global variable" for a name it
-- does not hold. rawset and setmetatable refuse the protected tables as Redis's do.
local api, version, version_num, load_api = ...
local G = _G
local getinfo = debug.getinfo
local error, type, tostring, next = error, type, tostring, next
local rawset, setmetatable, pcall, xpcall = rawset, setmetatable, pcall, xpcall

local take_error = api.take_error

local redis = {
  call = api.call,
  pcall = api.pcall,
  sha1hex = api.sha1hex,
  error_reply = api.error_reply,
  status_reply = api.status_reply,
  log = api.log,
  setresp = api.setresp,
  set_repl = api.set_repl,
  acl_check_cmd = api.acl_check_cmd,
  replicate_commands = function() return true end,
  breakpoint = api.breakpoint,
  debug = api.debug,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REPL_NONE = 0, REPL_AOF = 1, REPL_SLAVE = 2, REPL_REPLICA = 2, REPL_ALL = 3,
  REDIS_VERSION = version, REDIS_VERSION_NUM = version_num,
}
G.redis = redis

-- math.random on Redis's rand48, the same sequence on every platform.
math.random = api.random
math.randomseed = api.randomseed

-- Redis's pcall gives the message of an error table (redis.call's errors) as the error.
local function pcall_result(ok, ...)
  if ok then return true, ... end
  local e = ...
  if type(e) == 'userdata' then e = take_error(e) end
  if type(e) == 'table' then
    local m = e.err
    if type(m) == 'string' or type(m) == 'number' then e = m end
  end
  return false, e
end
G.pcall = function(...) return pcall_result(pcall(...)) end

-- The error handler: the error as a table {err=, source=, line=} with the place in the
-- script where it was raised (C functions and this chunk's wrappers are skipped).
local function error_handler(err)
  local level = 2
  local i = getinfo(level, 'nSl')
  while i and (i.what == 'C' or i.source == '=sandbox') do
    level = level + 1
    i = getinfo(level, 'nSl')
  end
  if type(err) == 'userdata' then err = take_error(err) end
  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end
  if i then
    err.source = i.source
    err.line = i.currentline
  end
  return err
end
G.__redis__err__handler = error_handler

-- Lua 5.1 runs a chunk that starts with ESC (its bytecode signature) as bytecode, which
-- its loader does not verify (CVE-2015-4335); Redis's Lua parses every chunk as text, where
-- the ESC is a syntax error. A leading space (same line, same chunk name) makes the parser
-- see the chunk as Redis's does. The wrappers call the originals without a tail call, so
-- their argument errors still name them.
local loadstring, load = loadstring, load
local function pass(...) return ... end
local function bytecode(s) return type(s) == 'string' and s:byte(1) == 27 end
G.loadstring = function(s, ...)
  if bytecode(s) then
    local name = ...
    return pass(loadstring(' ' .. s, name or s))
  end
  return pass(loadstring(s, ...))
end
G.load = function(reader, ...)
  if type(reader) == 'function' then
    local started = false
    local function text_reader()
      local piece = reader()
      if not started and piece ~= nil and piece ~= '' then
        started = true
        if bytecode(piece) then return ' ' .. piece end
      end
      return piece
    end
    return pass(load(text_reader, ...))
  end
  return pass(load(reader, ...))
end

-- The globals Redis keeps (its allow lists); anything else is dropped, debug last.
local allowed = {}
for name in ([[string cjson bit cmsgpack math table struct redis __redis__err__handler
  xpcall tostring getfenv setmetatable next assert tonumber rawequal collectgarbage
  getmetatable rawset pcall coroutine type _G select unpack gcinfo pairs rawget loadstring
  ipairs _VERSION setfenv load error newproxy]]):gmatch('%S+') do
  allowed[name] = true
end
for name in next, G do
  if not allowed[name] then G[name] = nil end
end

local readonly = setmetatable({}, {__mode = 'k'})
local function readonly_error() error('Attempt to modify a readonly table', 2) end
local function refuse_readonly(t)
  if readonly[t] then error('Attempt to modify a readonly table', 0) end
end
G.rawset = function(t, ...)
  refuse_readonly(t)
  return rawset(t, ...)
end
G.setmetatable = function(t, ...)
  refuse_readonly(t)
  return setmetatable(t, ...)
end

-- Empties `t` into a new backing table and makes `t` a read-only view of it.
local function protect(t, backing)
  backing = backing or {}
  for k, v in next, t do backing[k] = v end
  for k in next, backing do t[k] = nil end
  local meta = {__index = backing, __newindex = readonly_error, __metatable = false}
  setmetatable(t, meta)
  readonly[t] = true
  return backing, meta
end

local string_meta = getmetatable('')
for _, v in next, G do
  if type(v) == 'table' and v ~= G then protect(v) end
end
local function nonexistent(_, name)
  error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end
local globals = setmetatable({}, {__index = nonexistent})
local _, globals_meta = protect(G, globals)
-- getmetatable(_G) answers a read-only table whose __index is the nonexistent-global error,
-- as Redis's does.
local globals_meta_view = {}
protect(globals_meta_view, {__index = nonexistent})
globals_meta.__metatable = globals_meta_view
local set_loading
if load_api then
  local load_redis = {}
  protect(load_redis, setmetatable({
    register_function = load_api.register_function, log = api.log,
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
    REDIS_VERSION = version, REDIS_VERSION_NUM = version_num,
  }, {__index = nonexistent}))
  local load_globals = setmetatable({redis = load_redis}, {__index = nonexistent})
  set_loading = function(on)
    globals_meta.__index = on and load_globals or globals
  end
end
-- getmetatable('') answers a read-only view, so string methods cannot be replaced.
local string_view = setmetatable({}, {__index = string_meta, __newindex = readonly_error, __metatable = false})
readonly[string_view] = true
string_meta.__metatable = string_view

-- A script runs without arguments (KEYS and ARGV are globals); a function gets its keys
-- and arguments.
local function run(f, keys, args)
  if keys == nil then return xpcall(f, error_handler) end
  return xpcall(function() return f(keys, args) end, error_handler)
end
-- Runs a library's code (no error handler: Redis's luaEngineCreate uses lua_pcall) and
-- returns nil, or its error's message as luaExtractErrorInformation words it.
local function load_library(f)
  local ok, e = pcall(f)
  if ok then return nil end
  if type(e) == 'userdata' then e = take_error(e) end
  if type(e) == 'string' or type(e) == 'number' then return 'ERR ' .. e end
  if type(e) == 'table' then return e.err or false end
  return false
end
return run, globals, set_loading, load_library
