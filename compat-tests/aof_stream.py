"""Reading an append-only directory's command stream, for tests that compare what Redis and
Goblin logged: the manifest's incremental files in order, parsed as RESP commands."""

from __future__ import annotations

from pathlib import Path


def parse_commands(data: bytes) -> list[list[bytes]]:
    """The RESP arrays of bulk strings in `data` (`#TS:` annotations skipped)."""
    out, i = [], 0
    while i < len(data):
        if data.startswith(b"#", i):
            i = data.index(b"\r\n", i) + 2
            continue
        assert data[i:i + 1] == b"*", (i, data[i:i + 20])
        end = data.index(b"\r\n", i)
        argc, i = int(data[i + 1:end]), end + 2
        argv = []
        for _ in range(argc):
            assert data[i:i + 1] == b"$", (i, data[i:i + 20])
            end = data.index(b"\r\n", i)
            n, i = int(data[i + 1:end]), end + 2
            argv.append(data[i:i + n])
            i += n + 2
        out.append(argv)
    return out


def manifest_files(aof_dir: Path, filename: str = "appendonly.aof") -> list[tuple[str, str]]:
    """(name, type) of each file the manifest lists, in its order."""
    files = []
    for line in (aof_dir / f"{filename}.manifest").read_text().splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        fields = dict(zip(words[::2], words[1::2]))
        files.append((fields["file"], fields["type"]))
    return files


def incr_stream(workdir: Path) -> list[list[bytes]]:
    """The commands of every incremental file of `workdir`'s appendonlydir, in order."""
    aof_dir = workdir / "appendonlydir"
    out = []
    for name, kind in manifest_files(aof_dir):
        if kind == "i":
            out += parse_commands((aof_dir / name).read_bytes())
    return out
