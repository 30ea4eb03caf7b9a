//! MODULE: Goblin loads no Redis modules (it has no module API), so it answers as a Redis
//! with none loaded: LIST is empty, LOAD and LOADEX fail with Redis's reply (the reason in
//! the log, as Redis logs dlopen's), UNLOAD finds no such module. LOAD, LOADEX and UNLOAD
//! are protected commands: enable-module-command gates them first, as in Redis.

use super::server_cmds::help_reply;
use super::Ctx;

/// MODULE LIST: the loaded modules (none).
pub fn list(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.array(0);
}

/// MODULE LOAD path [arg ...] and MODULE LOADEX path [CONFIG name value ...] [ARGS ...]:
/// nothing can be loaded.
pub fn load(ctx: &mut Ctx, args: &[&[u8]]) {
    crate::warning!(
        "Module {} failed to load: Goblin does not load Redis modules",
        String::from_utf8_lossy(args[2])
    );
    ctx.error("ERR Error loading the extension. Please check the server logs.");
}

/// MODULE UNLOAD name: no module has that name.
pub fn unload(ctx: &mut Ctx, args: &[&[u8]]) {
    const WHY: &str = "no such module with that name";
    crate::warning!(
        "Error unloading module {}: {WHY}",
        String::from_utf8_lossy(args[2])
    );
    ctx.error(&format!("ERR Error unloading module: {WHY}"));
}

/// MODULE HELP
pub fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    help_reply(
        ctx,
        "MODULE",
        &[
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.",
        ],
    );
}
