//! Function libraries (Redis's functions.c and function_lua.c): the libraries by name,
//! their functions by name (ASCII case ignored, as Redis's dictionary compares), and the
//! Lua interpreter they live in, separate from EVAL's.
//!
//! Loading a library compiles its code (chunk `@user_function`) and runs it with the
//! load-time globals (`redis.register_function`, `redis.log`, ...; see `prelude.lua`)
//! under a 500 ms budget; what it registered becomes the library's functions, unless a
//! name collides with another library's.

use super::api;
use super::cache::ScriptFlags;
use super::engine::Engine;
use super::library::{self, BAD_NAME};
use mlua::{Function, HookTriggers, MultiValue, Table, Value, VmState};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The budget of a library's load (Redis's LOAD_TIMEOUT_MS).
pub const LOAD_TIMEOUT: Duration = Duration::from_millis(500);
/// The budget of a library's load from a file (RDB, AOF), where Redis has none: long
/// enough for any library that loaded once, short of a hang on a crafted file.
pub const FILE_LOAD_TIMEOUT: Duration = Duration::from_secs(10);

/// One registered function.
pub struct FunctionInfo {
    /// Its name.
    pub name: Vec<u8>,
    /// The name of its library.
    pub library: Vec<u8>,
    /// Its description, if given.
    pub description: Option<Vec<u8>>,
    /// Its flags (never `compat`).
    pub flags: ScriptFlags,
    /// The callback.
    pub callback: Function,
}

/// One library.
pub struct Library {
    /// Its name.
    pub name: Vec<u8>,
    /// Its whole code, the `#!` line included (what DUMP, the RDB and the AOF keep).
    pub code: Vec<u8>,
    /// Its functions in the order they were registered.
    pub functions: Vec<Rc<FunctionInfo>>,
}

/// A set of libraries with the index of their functions.
#[derive(Default)]
pub struct Libraries {
    libraries: BTreeMap<Vec<u8>, Library>,
    functions: HashMap<Vec<u8>, Rc<FunctionInfo>>,
}

impl Libraries {
    /// The function called `name` (ASCII case ignored).
    pub fn function(&self, name: &[u8]) -> Option<Rc<FunctionInfo>> {
        self.functions.get(&name.to_ascii_lowercase()).cloned()
    }

    /// The library called `name`.
    pub fn library(&self, name: &[u8]) -> Option<&Library> {
        self.libraries.get(name)
    }

    /// The libraries, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Library> {
        self.libraries.values()
    }

    /// Number of libraries.
    pub fn len(&self) -> usize {
        self.libraries.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.libraries.is_empty()
    }

    /// Number of functions.
    pub fn function_count(&self) -> usize {
        self.functions.len()
    }

    fn link(&mut self, library: Library) {
        for f in &library.functions {
            self.functions
                .insert(f.name.to_ascii_lowercase(), f.clone());
        }
        self.libraries.insert(library.name.clone(), library);
    }

    /// Removes the library called `name`.
    pub fn unlink(&mut self, name: &[u8]) -> Option<Library> {
        let library = self.libraries.remove(name)?;
        for f in &library.functions {
            self.functions.remove(&f.name.to_ascii_lowercase());
        }
        Some(library)
    }

    /// The first function of `functions` whose name another library's function has.
    fn collision<'f>(&self, functions: &'f [Rc<FunctionInfo>]) -> Option<&'f FunctionInfo> {
        functions
            .iter()
            .find(|f| self.function(&f.name).is_some())
            .map(|f| &**f)
    }

    /// Moves `other`'s libraries in (Redis's libraryJoin): a library of the same name is
    /// an error, or with `replace` is replaced; a function name another library has is an
    /// error. Nothing changes on error.
    pub fn join(&mut self, other: Libraries, replace: bool) -> Result<(), String> {
        let mut replaced = Vec::new();
        for name in other.libraries.keys() {
            if self.libraries.contains_key(name) {
                if !replace {
                    self.relink(replaced);
                    return Err(format!(
                        "Library {} already exists",
                        String::from_utf8_lossy(name)
                    ));
                }
                replaced.push(self.unlink(name).expect("present"));
            }
        }
        for library in other.libraries.values() {
            if let Some(f) = self.collision(&library.functions) {
                let text = format!(
                    "Function {} already exists",
                    String::from_utf8_lossy(&f.name)
                );
                self.relink(replaced);
                return Err(text);
            }
        }
        for (_, library) in other.libraries {
            self.link(library);
        }
        Ok(())
    }

    fn relink(&mut self, libraries: Vec<Library>) {
        for library in libraries {
            self.link(library);
        }
    }
}

/// What a library registers while it loads (`None` outside a load).
type Registering = Rc<RefCell<Option<Vec<Rc<FunctionInfo>>>>>;

/// The functions engine: its interpreter and libraries.
pub struct Functions {
    /// The interpreter the libraries live in.
    pub engine: Engine,
    /// The libraries.
    pub libraries: Libraries,
    registering: Registering,
}

impl Default for Functions {
    fn default() -> Self {
        Functions::new()
    }
}

impl Functions {
    /// No libraries, a fresh interpreter.
    pub fn new() -> Functions {
        let registering: Registering = Rc::default();
        let slot = registering.clone();
        let engine = Engine::for_functions(move |lua, pending| {
            let pending = pending.clone();
            lua.create_function(move |lua, args: MultiValue| {
                register_function(&slot, &args).map_err(|text| pending.raise_text(lua, text))
            })
        });
        Functions {
            engine,
            libraries: Libraries::default(),
            registering,
        }
    }

    /// FUNCTION LOAD: creates the library `code` describes in the current libraries;
    /// returns its name, or Redis's error text (without `ERR `). `timeout` (None for the
    /// AOF and RDB loads) bounds the run of its code.
    pub fn load(
        &mut self,
        code: &[u8],
        replace: bool,
        timeout: Option<Duration>,
    ) -> Result<Vec<u8>, String> {
        let mut libraries = std::mem::take(&mut self.libraries);
        let outcome = self.create(&mut libraries, code, replace, timeout);
        self.libraries = libraries;
        outcome
    }

    /// Creates the library `code` describes in `libraries` (Redis's
    /// functionsCreateWithLibraryCtx).
    pub fn create(
        &self,
        libraries: &mut Libraries,
        code: &[u8],
        replace: bool,
        timeout: Option<Duration>,
    ) -> Result<Vec<u8>, String> {
        let md = library::metadata(code)?;
        if !library::valid_name(&md.name) {
            return Err(BAD_NAME.into());
        }
        if !md.engine.eq_ignore_ascii_case(b"lua") {
            return Err(format!(
                "Engine '{}' not found",
                String::from_utf8_lossy(&md.engine)
            ));
        }
        if libraries.library(&md.name).is_some() && !replace {
            return Err(format!(
                "Library '{}' already exists",
                String::from_utf8_lossy(&md.name)
            ));
        }
        let chunk = self
            .engine
            .compile_library(&code[md.code_start..])
            .map_err(|e| format!("Error compiling function: {e}"))?;
        let functions = self.run_library(&chunk, &md.name, timeout)?;
        if functions.is_empty() {
            return Err("No functions registered".into());
        }
        let old = libraries.unlink(&md.name);
        if let Some(f) = libraries.collision(&functions) {
            let text = format!(
                "Function {} already exists",
                String::from_utf8_lossy(&f.name)
            );
            if let Some(old) = old {
                libraries.link(old);
            }
            return Err(text);
        }
        libraries.link(Library {
            name: md.name.clone(),
            code: code.to_vec(),
            functions,
        });
        Ok(md.name)
    }

    /// Runs a library's compiled code with the load-time globals; what it registered.
    fn run_library(
        &self,
        chunk: &Function,
        library: &[u8],
        timeout: Option<Duration>,
    ) -> Result<Vec<Rc<FunctionInfo>>, String> {
        let lua = self.engine.lua();
        *self.registering.borrow_mut() = Some(Vec::new());
        if let Some(timeout) = timeout {
            let started = Instant::now();
            let pending = self.engine.pending.clone();
            let fired = std::cell::Cell::new(false);
            // The load-time globals have no pcall, so one error stops the load (Redis
            // then hooks every line; here the error is raised once, and the sandbox's
            // own code that collects it runs on).
            lua.set_hook(
                HookTriggers::new().every_nth_instruction(100_000),
                move |lua, _| {
                    if fired.get() || started.elapsed() <= timeout {
                        return Ok(VmState::Continue);
                    }
                    fired.set(true);
                    Err(pending.raise_text(lua, "FUNCTION LOAD timeout"))
                },
            )
            .map_err(|e| e.to_string())?;
        }
        self.engine.pending.clear();
        let outcome = self.engine.run_library(chunk);
        if timeout.is_some() {
            lua.remove_hook();
        }
        let registered = self.registering.borrow_mut().take().unwrap_or_default();
        if let Err(message) = outcome {
            return Err(format!(
                "Error registering functions: {}",
                String::from_utf8_lossy(&message)
            ));
        }
        Ok(registered
            .into_iter()
            .map(|f| {
                Rc::new(FunctionInfo {
                    name: f.name.clone(),
                    library: library.to_vec(),
                    description: f.description.clone(),
                    flags: f.flags,
                    callback: f.callback.clone(),
                })
            })
            .collect())
    }

    /// FUNCTION DELETE: whether the library existed.
    pub fn delete(&mut self, name: &[u8]) -> bool {
        self.libraries.unlink(name).is_some()
    }

    /// FUNCTION FLUSH: no libraries, a fresh interpreter.
    pub fn flush(&mut self) {
        *self = Functions::new();
    }

    /// The libraries' codes (for DUMP, the RDB and the AOF).
    pub fn codes(&self) -> Vec<Vec<u8>> {
        self.libraries.iter().map(|l| l.code.clone()).collect()
    }

    /// Loads these libraries' codes (FUNCTION RESTORE's payload, an RDB file's) into a new
    /// set of libraries, each run within `timeout`; Redis's error text on failure.
    pub fn create_all(&self, codes: &[Vec<u8>], timeout: Duration) -> Result<Libraries, String> {
        let mut libraries = Libraries::default();
        for code in codes {
            self.create(&mut libraries, code, false, Some(timeout))?;
        }
        Ok(libraries)
    }

    /// Bytes the interpreter has allocated (INFO used_memory_vm_functions).
    pub fn vm_memory(&self) -> usize {
        self.engine.used_memory()
    }

    /// The memory the libraries hold outside the interpreter, as Redis's
    /// functionsMemoryOverhead counts it, roughly: names, codes, descriptions, records.
    pub fn memory(&self) -> usize {
        let mut total = 0;
        for l in self.libraries.iter() {
            total += 64 + l.name.len() + l.code.len();
            for f in &l.functions {
                total += 64 + f.name.len() + f.description.as_ref().map_or(0, Vec::len);
            }
        }
        total
    }
}

/// redis.register_function: checks the arguments as Redis's luaRegisterFunction and
/// adds the function to the library being loaded; the error text otherwise.
fn register_function(registering: &Registering, args: &MultiValue) -> Result<(), &'static str> {
    let mut slot = registering.borrow_mut();
    let Some(registered) = slot.as_mut() else {
        return Err("redis.register_function can only be called on FUNCTION LOAD command");
    };
    let f = match args.len() {
        1 => named_args(&args[0])?,
        2 => {
            let name = api::to_bytes(&args[0])
                .ok_or("first argument to redis.register_function must be a string")?;
            let Value::Function(callback) = &args[1] else {
                return Err("second argument to redis.register_function must be a function");
            };
            FunctionInfo {
                name,
                library: Vec::new(),
                description: None,
                flags: ScriptFlags::default(),
                callback: callback.clone(),
            }
        }
        _ => return Err("wrong number of arguments to redis.register_function"),
    };
    if !library::valid_name(&f.name) {
        return Err(BAD_NAME);
    }
    if registered.iter().any(|g| g.name == f.name) {
        return Err("Function already exists in the library");
    }
    registered.push(Rc::new(f));
    Ok(())
}

/// redis.register_function{function_name=, callback=, flags=, description=}.
fn named_args(arg: &Value) -> Result<FunctionInfo, &'static str> {
    let Value::Table(t) = arg else {
        return Err("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).");
    };
    let (mut name, mut description, mut callback) = (None, None, None);
    let mut flags = ScriptFlags::default();
    for pair in t.pairs::<Value, Value>() {
        let (key, value) = pair.map_err(|_| "unknown argument given to redis.register_function")?;
        let key = api::to_bytes(&key)
            .ok_or("named argument key given to redis.register_function is not a string")?;
        let key = key.to_ascii_lowercase();
        match key.as_slice() {
            b"function_name" => {
                name = Some(api::to_bytes(&value).ok_or(
                    "function_name argument given to redis.register_function must be a string",
                )?)
            }
            b"description" => {
                description = Some(api::to_bytes(&value).ok_or(
                    "description argument given to redis.register_function must be a string",
                )?)
            }
            b"callback" => match value {
                Value::Function(f) => callback = Some(f),
                _ => {
                    return Err(
                        "callback argument given to redis.register_function must be a function",
                    )
                }
            },
            b"flags" => match value {
                Value::Table(list) => flags = read_flags(&list)?,
                _ => return Err("flags argument to redis.register_function must be a table representing function flags"),
            },
            _ => return Err("unknown argument given to redis.register_function"),
        }
    }
    let name = name.ok_or("redis.register_function must get a function name argument")?;
    let callback = callback.ok_or("redis.register_function must get a callback argument")?;
    Ok(FunctionInfo {
        name,
        library: Vec::new(),
        description,
        flags,
        callback,
    })
}

/// The flags of a `flags` table: its items 1, 2, ... up to the first nil.
fn read_flags(list: &Table) -> Result<ScriptFlags, &'static str> {
    let mut flags = ScriptFlags::default();
    for i in 1.. {
        let value: Value = list.get(i).map_err(|_| "unknown flag given")?;
        if value.is_nil() {
            break;
        }
        let name = api::to_bytes(&value).ok_or("unknown flag given")?;
        if !library::set_flag(&mut flags, &name) {
            return Err("unknown flag given");
        }
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(name: &str, body: &str) -> Vec<u8> {
        format!("#!lua name={name}\n{body}").into_bytes()
    }

    #[test]
    fn load_registers_functions_and_checks_collisions() {
        let mut f = Functions::new();
        let code = lib(
            "l1",
            "redis.register_function('a', function() return 1 end)\n\
             redis.register_function{function_name='B', callback=function() end, flags={'no-writes'}, description='d'}",
        );
        assert_eq!(f.load(&code, false, Some(LOAD_TIMEOUT)).unwrap(), b"l1");
        assert_eq!(f.libraries.function_count(), 2);
        let b = f.libraries.function(b"b").unwrap();
        assert!(b.flags.no_writes);
        assert_eq!(b.description.as_deref(), Some(&b"d"[..]));
        assert_eq!(
            f.load(&code, false, None).unwrap_err(),
            "Library 'l1' already exists"
        );
        assert_eq!(f.load(&code, true, None).unwrap(), b"l1");
        let other = lib("l2", "redis.register_function('A', function() end)");
        assert_eq!(
            f.load(&other, false, None).unwrap_err(),
            "Function A already exists"
        );
        assert_eq!(
            f.load(&lib("l2", "local x = 1"), false, None).unwrap_err(),
            "No functions registered"
        );
        assert_eq!(
            f.load(&lib("l2", "return string.len('x')"), false, None)
                .unwrap_err(),
            "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'string'"
        );
        assert_eq!(
            f.load(
                &lib("l2", "redis.register_function('x-y', function() end)"),
                false,
                None
            )
            .unwrap_err(),
            format!("Error registering functions: ERR {BAD_NAME}")
        );
        assert_eq!(
            f.load(&lib("l2", "return ("), false, None).unwrap_err(),
            "Error compiling function: user_function:2: unexpected symbol near '<eof>'"
        );
        assert_eq!(f.libraries.len(), 1);
    }

    #[test]
    fn a_load_past_its_budget_stops() {
        let mut f = Functions::new();
        let code = lib("slow", "while true do end");
        let err = f
            .load(&code, false, Some(Duration::from_millis(20)))
            .unwrap_err();
        assert_eq!(
            err,
            "Error registering functions: ERR FUNCTION LOAD timeout"
        );
        // The interpreter still works afterwards.
        let ok = lib(
            "ok",
            "redis.register_function('f', function() return 1 end)",
        );
        assert!(f.load(&ok, false, Some(LOAD_TIMEOUT)).is_ok());
    }

    #[test]
    fn join_replaces_or_refuses() {
        let f = Functions::new();
        let mut current = f
            .create_all(
                &[lib("a", "redis.register_function('fa', function() end)")],
                LOAD_TIMEOUT,
            )
            .unwrap();
        let incoming = || {
            f.create_all(
                &[lib("a", "redis.register_function('fb', function() end)")],
                LOAD_TIMEOUT,
            )
            .unwrap()
        };
        assert_eq!(
            current.join(incoming(), false).unwrap_err(),
            "Library a already exists"
        );
        assert!(current.function(b"fa").is_some());
        current.join(incoming(), true).unwrap();
        assert!(current.function(b"fa").is_none() && current.function(b"fb").is_some());
    }
}
