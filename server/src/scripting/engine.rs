//! The interpreter: Lua 5.1 with the libraries Redis loads (base, table, string, math;
//! debug only while the sandbox is built), the `redis` table, and the sandbox of
//! `prelude.lua` (see there for how read-only tables are made on stock Lua).

use super::api::{self, Pending};
use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value};
use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;

/// The sandbox, run once per interpreter.
const PRELUDE: &str = include_str!("prelude.lua");
/// The Lua debugger's view of the stack, built before the sandbox hides the debug library.
const INSPECT: &str = include_str!("ldb/inspect.lua");

/// Redis's REDIS_VERSION_NUM for the version Goblin follows (0x00MMmmpp).
fn version_num() -> u32 {
    let mut parts = crate::REDIS_VERSION
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor, patch) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    (major << 16) | (minor << 8) | patch
}

/// `code` as the parser is to see it: Lua 5.1 takes a chunk that starts with ESC (its
/// bytecode signature) for bytecode, which its loader does not verify (CVE-2015-4335);
/// Redis's Lua parses every chunk as text, where the ESC is a syntax error. A leading space
/// (same line numbers) gets that error here too (prelude.lua does the same for
/// `loadstring` and `load`).
fn as_text(code: &[u8]) -> Cow<'_, [u8]> {
    match code.first() {
        Some(0x1b) => Cow::Owned([b" ", code].concat()),
        _ => Cow::Borrowed(code),
    }
}

/// Compiles `code` as text in `lua` under the chunk name `name`; the parser's message when
/// it does not compile.
pub fn compile_in(lua: &Lua, code: &[u8], name: &str) -> Result<Function, String> {
    lua.load(&*as_text(code))
        .set_name(name)
        .set_mode(ChunkMode::Text)
        .into_function()
        .map_err(|e| match e {
            mlua::Error::SyntaxError { message, .. } => message,
            other => other.to_string(),
        })
}

/// Where the `redis` functions find the invocation running now: a pointer to its
/// [`Run`](super::run::Run), set only while [`Engine::call`] runs the script.
pub type ActiveRun = Rc<Cell<*mut ()>>;

/// A Lua interpreter set up as Redis sets up its scripting one (a clone is another handle
/// on the same interpreter).
#[derive(Clone)]
pub struct Engine {
    lua: Lua,
    /// The table the (read-only, empty) global table reads through: KEYS and ARGV go here.
    globals: Table,
    /// xpcall of a script with Redis's error handler.
    runner: Function,
    /// The invocation running now.
    pub active: ActiveRun,
    /// The error a Rust function raised last.
    pub pending: Pending,
    /// The functions engine's switch between the globals and a library load's ones.
    set_loading: Option<Function>,
    /// The functions engine's runner of a library's code.
    load_library: Option<Function>,
    /// `frame` and `run` of `ldb/inspect.lua`, for the Lua debugger.
    pub inspect: (Function, Function),
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    /// A fresh interpreter with the sandbox in place, for EVAL's scripts.
    pub fn new() -> Engine {
        Engine::build(None)
    }

    /// A fresh interpreter for function libraries: `register` makes the
    /// redis.register_function a library's load sees.
    pub fn for_functions(
        register: impl FnOnce(&Lua, &Pending) -> mlua::Result<Function>,
    ) -> Engine {
        Engine::build(Some(Box::new(register)))
    }

    #[allow(clippy::type_complexity)]
    fn build(
        register: Option<Box<dyn FnOnce(&Lua, &Pending) -> mlua::Result<Function> + '_>>,
    ) -> Engine {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG;
        // SAFETY: the debug library is what mlua calls unsafe; the sandbox keeps only
        // debug.getinfo for its error handler and removes the `debug` global, as Redis does.
        let lua = unsafe { Lua::unsafe_new_with(libs, LuaOptions::default()) };
        let active: ActiveRun = Rc::new(Cell::new(std::ptr::null_mut()));
        let pending = Pending::default();
        let functions =
            api::functions(&lua, &active, &pending).expect("the redis functions are created");
        let inspect: (Function, Function) = lua
            .load(INSPECT)
            .set_name("=ldb")
            .call(())
            .expect("the debugger's stack view builds");
        super::libs::install(&lua, &pending).expect("the libraries are installed");
        let load_api = register.map(|make| {
            let t = lua.create_table().expect("a table");
            let f = make(&lua, &pending).expect("register_function is created");
            t.raw_set("register_function", f).expect("a field");
            t
        });
        let (runner, globals, set_loading, load_library): (
            Function,
            Table,
            Option<Function>,
            Option<Function>,
        ) = lua
            .load(PRELUDE)
            .set_name("=sandbox")
            .call((functions, crate::REDIS_VERSION, version_num(), load_api))
            .expect("the sandbox builds");
        Engine {
            lua,
            globals,
            runner,
            active,
            pending,
            set_loading,
            load_library,
            inspect,
        }
    }

    /// Compiles a library's code (chunk `@user_function`, so errors say
    /// `user_function:N:`).
    pub fn compile_library(&self, code: &[u8]) -> Result<Function, String> {
        compile_in(&self.lua, code, "@user_function")
    }

    /// Runs a compiled library with the load-time globals (functions engine only):
    /// `Err` with the message of its error.
    pub fn run_library(&self, library: &Function) -> Result<(), Vec<u8>> {
        let (Some(set_loading), Some(load_library)) = (&self.set_loading, &self.load_library)
        else {
            return Err(b"ERR not a functions engine".to_vec());
        };
        let _ = set_loading.call::<()>(true);
        let outcome = load_library.call::<Value>(library);
        let _ = set_loading.call::<()>(false);
        match outcome {
            Ok(Value::Nil) => Ok(()),
            Ok(Value::String(s)) => Err(s.as_bytes().to_vec()),
            Ok(_) => Err(Vec::new()),
            Err(e) => Err(format!("ERR {e}").into_bytes()),
        }
    }

    /// Runs `function` under Redis's error handler with a function's arguments (its keys
    /// and arguments as two tables), as [`Engine::call`].
    pub fn call_function(
        &self,
        function: &Function,
        keys: &[&[u8]],
        args: &[&[u8]],
    ) -> mlua::Result<Result<Value, Value>> {
        let table = |items: &[&[u8]]| -> mlua::Result<Table> {
            let t = self.lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, self.lua.create_string(item)?)?;
            }
            Ok(t)
        };
        let (ok, value): (bool, Value) =
            self.runner.call((function, table(keys)?, table(args)?))?;
        Ok(if ok { Ok(value) } else { Err(value) })
    }

    /// Compiles a script body (chunk `@user_script`, so errors say `user_script:N:`).
    pub fn compile(&self, body: &[u8]) -> Result<Function, String> {
        compile_in(&self.lua, body, "@user_script")
    }

    /// The interpreter.
    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// Sets the KEYS and ARGV globals of the next run.
    pub fn set_keys_and_args(&self, keys: &[&[u8]], args: &[&[u8]]) -> mlua::Result<()> {
        for (name, items) in [("KEYS", keys), ("ARGV", args)] {
            let table = self.lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                table.raw_set(i + 1, self.lua.create_string(item)?)?;
            }
            self.globals.raw_set(name, table)?;
        }
        Ok(())
    }

    /// Runs `function` under Redis's error handler: `Ok` with what it returned, or `Err`
    /// with the error table (`err`, `source`, `line`).
    pub fn call(&self, function: &Function) -> mlua::Result<Result<Value, Value>> {
        let (ok, value): (bool, Value) = self.runner.call(function)?;
        Ok(if ok { Ok(value) } else { Err(value) })
    }

    /// Bytes the interpreter has allocated.
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }

    /// A step of garbage collection (Redis runs one every 50 scripts).
    pub fn gc_step(&self) {
        let _ = self.lua.gc_step();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(engine: &Engine, body: &str) -> Result<Value, String> {
        let f = engine.compile(body.as_bytes())?;
        engine.call(&f).unwrap().map_err(|e| {
            let t = e.as_table().expect("an error table");
            let msg: String = t.get("err").unwrap();
            let line: i64 = t.get("line").unwrap_or(-1);
            format!("{msg} @{line}")
        })
    }

    #[test]
    fn globals_are_protected_with_redis_texts() {
        let e = Engine::new();
        assert_eq!(
            run(&e, "x = 1").unwrap_err(),
            "ERR user_script:1: Attempt to modify a readonly table @1"
        );
        assert_eq!(
            run(&e, "\nreturn y").unwrap_err(),
            "ERR user_script:2: Script attempted to access nonexistent global variable 'y' @2"
        );
        assert_eq!(
            run(&e, "string.x = 1").unwrap_err(),
            "ERR user_script:1: Attempt to modify a readonly table @1"
        );
        assert_eq!(
            run(&e, "rawset(_G, 'x', 1)").unwrap_err(),
            "ERR Attempt to modify a readonly table @1"
        );
        for removed in [
            "os", "io", "loadfile", "dofile", "print", "debug", "require",
        ] {
            assert!(
                run(&e, &format!("return {removed}"))
                    .unwrap_err()
                    .contains("nonexistent global variable"),
                "{removed} is gone"
            );
        }
        assert_eq!(
            run(&e, "return string.upper('a') .. ('b'):upper()").unwrap(),
            Value::String(e.lua.create_string("AB").unwrap())
        );
        assert!(run(&e, "getmetatable('').__index = nil")
            .unwrap_err()
            .contains("readonly"));
    }

    #[test]
    fn compile_errors_name_the_user_script() {
        let e = Engine::new();
        assert_eq!(
            e.compile(b"return (").unwrap_err(),
            "user_script:1: unexpected symbol near '<eof>'"
        );
    }

    #[test]
    fn bytecode_is_parsed_as_text_everywhere() {
        let e = Engine::new();
        let near_esc = "unexpected symbol near 'char(27)'";
        let body = e.compile(b"\x1bLuaQ\x00").unwrap_err();
        assert_eq!(body, format!("user_script:1: {near_esc}"));
        let ran = run(
            &e,
            "local s = string.dump(function() return 1 end)
             local once = false
             local function reader() if once then return nil end once = true return s end
             local a, ea = loadstring(s, 'dumped')
             local b, eb = load(reader)
             return {tostring(a), ea, tostring(b), eb, loadstring('return 7')()}",
        )
        .unwrap();
        let t = ran.as_table().expect("a table");
        let got: Vec<String> = (1..=5)
            .map(|i| t.get::<Value>(i).unwrap().to_string().unwrap())
            .collect();
        assert_eq!(
            got,
            [
                "nil".to_string(),
                format!("[string \"dumped\"]:1: {near_esc}"),
                "nil".to_string(),
                format!("(load):1: {near_esc}"),
                "7".to_string(),
            ]
        );
    }

    #[test]
    fn keys_and_args_are_globals() {
        let e = Engine::new();
        e.set_keys_and_args(&[b"k"], &[b"a", b"b"]).unwrap();
        let v = run(&e, "return KEYS[1] .. ARGV[2] .. #ARGV").unwrap();
        assert_eq!(v.as_string().unwrap().to_str().unwrap(), "kb2");
    }
}
