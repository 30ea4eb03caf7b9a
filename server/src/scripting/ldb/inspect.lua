-- The Lua debugger's view of the stack (chunk "=ldb"), built on a fresh interpreter before
-- the sandbox removes the debug library. Returns two functions for the debugger's hook:
--
-- frame(n): the n-th frame from where the script stopped (0: there; the sandbox's own
-- frames are not counted, C functions are), as {short_src, name, line, names, values,
-- count} with its locals in order, or nil past the outermost. Called from the hook, whose
-- C code pushes no frame: level 1 is frame itself, level 2 the code stopped at.
--
-- run(f, ...): f called under the original pcall (no error handler): true and its
-- results, or false and the raw error value.
local getinfo, getlocal, pcall = debug.getinfo, debug.getlocal, pcall

local function frame(n)
  local level, seen = 2, -1
  while true do
    local info = getinfo(level, 'Snl')
    if not info then return nil end
    if info.source ~= '=sandbox' then
      seen = seen + 1
      if seen == n then
        local names, values, i = {}, {}, 1
        while true do
          local name, value = getlocal(level, i)
          if name == nil then break end
          names[i], values[i] = name, value
          i = i + 1
        end
        return {short_src = info.short_src, name = info.name, line = info.currentline,
                names = names, values = values, count = i - 1}
      end
    end
    level = level + 1
  end
end

local function run(f, ...)
  return pcall(f, ...)
end

return frame, run
