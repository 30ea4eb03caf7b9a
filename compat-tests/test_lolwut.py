"""LOLWUT against Redis: the version line (7.2's own art), VERSION 5's Schotter byte for byte
where it is deterministic (two rows of squares or fewer: only lower rows are shaken by
rand()), its shape otherwise, VERSION 6's skyline shape (random windows and heights: line
count, cells per line, the four grays), argument errors and clamping, and the versions that
fall back to the version line. Redis's version number in the captions is replaced by
Goblin's (7.2.4) before comparing."""

import re

import pytest


def text(reply) -> str:
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def same_but_version(both, *cmd):
    r, g = both.run(*cmd)
    if isinstance(r, Exception) or isinstance(g, Exception):
        assert repr(r) == repr(g), (cmd, r, g)
        return None
    rt = re.sub(r"Redis ver\. [0-9.]+", "Redis ver. V", text(r))
    gt = re.sub(r"Redis ver\. [0-9.]+", "Redis ver. V", text(g))
    assert rt == gt, (cmd, rt, gt)
    assert "Redis ver. 7.2.4\n" in text(g)
    return gt


def test_version_line(both):
    assert same_but_version(both, "LOLWUT") == "Redis ver. V\n"
    for args in [("VERSION", "7"), ("VERSION", "4"), ("VERSION", "59"), ("VERSION", "-1"),
                 ("version", "8", "1", "2"), ("VERSION",), ("foo", "bar"),
                 ("VERSION", "4294967303")]:
        same_but_version(both, "LOLWUT", *args)
    # C's (unsigned int) of 2^32 + 5 is 5: Schotter (random lower rows), on both.
    r, g = (text(x) for x in both.run("LOLWUT", "VERSION", "4294967301"))
    assert "schotter" in r and "schotter" in g


def test_errors(both):
    for args in [("VERSION", "x"), ("VERSION", "5", "x"), ("VERSION", "5", "1", "1.5"),
                 ("VERSION", "6", "10", "y"), ("VERSION", "")]:
        both.err("LOLWUT", *args)


@pytest.mark.parametrize("args", [
    ("0", "0", "0"), ("2", "1", "1"), ("1", "1", "1"), ("-5", "-5", "-5"), ("66", "8", "2"),
    ("40", "3", "1"), ("10", "200", "2"), ("3", "2", "2"), ("100", "7", "2"), ("5", "8", "2"),
    ("3000", "1", "1"), ("33", "250", "1"), ("66", "8", "1", "extra"),
])
def test_schotter_deterministic_rows(both, args):
    same_but_version(both, "LOLWUT", "VERSION", "5", *args)


def shape(art: str):
    lines = art.split("\n")
    return [len(l) for l in lines]


@pytest.mark.parametrize("args", [(), ("20", "4", "6"), ("80", "10", "30")])
def test_schotter_shape(both, args):
    r, g = (text(x) for x in both.run("LOLWUT", "VERSION", "5", *args))
    assert shape(r.rsplit("\n", 2)[0]) == shape(g.rsplit("\n", 2)[0])
    assert g.endswith("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. 7.2.4\n")
    assert set(g.rsplit("\n", 2)[0]) <= {chr(c) for c in range(0x2800, 0x2900)} | {"\n"}


GRAYS = ["\x1b[0;30;40m \x1b[0m", "\x1b[0;90;100m \x1b[0m", "\x1b[0;37;47m \x1b[0m",
         "\x1b[0;97;107m \x1b[0m"]


@pytest.mark.parametrize("args", [(), ("1", "1"), ("30", "10"), ("0", "-3"), ("120", "5", "x")])
def test_skyline_shape(both, args):
    r, g = (text(x) for x in both.run("LOLWUT", "VERSION", "6", *args))
    caption = ("\nDedicated to the 8 bit game developers of past and present.\n"
               "Original 8 bit image from Plaguemon by hikikomori. Redis ver. ")
    for out in (r, g):
        art, _, version = out.partition(caption)
        assert version.endswith("\n")
        rows = art.split("\n")
        cells = [re.findall(r"\x1b\[[0-9;]+m \x1b\[0m", row) for row in rows]
        assert all("".join(c) == row for c, row in zip(cells, rows))
        assert all(cell in GRAYS for row in cells for cell in row)
        dims = (len(rows), {len(c) for c in cells})
        if out is r:
            expected = dims
    assert dims == expected


def test_resp3_verbatim(both3):
    r, g = both3.run("LOLWUT", "VERSION", "5", "2", "1", "1")
    assert str(r).replace("7.0.15", "7.2.4") == str(g)
