"""memcached 1.6 text and meta protocol, replies compared byte for byte with memcached."""

import re
import struct
import time

import pytest

CASES = [
    # Unknown commands and bad lines.
    ("empty_line", b"\r\n"),
    ("unknown", b"foo\r\nfoo bar baz\r\n"),
    ("short_cmd", b"g\r\n"),
    ("bare_newline", b"\n"),
    ("get_no_key", b"get\r\ngets\r\n"),
    # Retrieval.
    ("get_miss", b"get gm_a\r\n"),
    ("get_multi", b"set gmu_a 1 0 1\r\na\r\nset gmu_b 2 0 2\r\nbb\r\nget gmu_a gmu_x gmu_b\r\n"),
    ("gets", b"set gs_a 7 0 3\r\nabc\r\ngets gs_a\r\n"),
    # memcached drops the replies of the whole get (and anything not yet sent) on a long key.
    ("get_long_key", b"get gmu_a " + b"k" * 251 + b"\r\n"),
    ("get_key_250", b"set " + b"k" * 250 + b" 0 0 1\r\na\r\nget " + b"k" * 250 + b"\r\n"),
    ("get_many_keys", b"set gmk_3 0 0 1\r\n3\r\nget " + b" ".join(b"gmk_%d" % i for i in range(40)) + b"\r\n"),
    ("lf_only", b"set lf_a 0 0 1\nx\r\nget lf_a\n"),
    # Storage.
    ("set_basic", b"set sb 0 0 5\r\nhello\r\nget sb\r\n"),
    ("set_flags", b"set sf 4294967295 0 1\r\nx\r\nget sf\r\n"),
    ("set_flags_overflow", b"set sfo 4294967296 0 1\r\nx\r\nget sfo\r\n"),
    ("set_neg_flags", b"set snf -1 0 1\r\nx\r\n"),
    ("set_bad_len", b"set sbl 0 0 abc\r\n"),
    ("set_neg_len", b"set snl 0 0 -1\r\n"),
    ("set_missing_len", b"set sml 0 0\r\n"),
    ("set_too_many", b"set stm 0 0 1 noreply extra\r\nx\r\n"),
    ("set_bad_exptime", b"set sbe 0 abc 1\r\nx\r\n"),
    ("set_bad_chunk", b"set sbc 0 0 1\r\nxy\r\nget sbc\r\n"),
    ("set_bad_chunk_noreply", b"set sbcn 0 0 1 noreply\r\nxy\r\n"),
    ("set_empty", b"set se 0 0 0\r\n\r\nget se\r\n"),
    ("set_binary", b"set sbin 0 0 4\r\n\x00\r\n\xff\r\nget sbin\r\n"),
    ("set_long_key", b"set " + b"k" * 251 + b" 0 0 1\r\nx\r\n"),
    ("set_noreply", b"set snr 0 0 1 noreply\r\nx\r\nget snr\r\n"),
    ("add", b"add ad 0 0 1\r\na\r\nadd ad 0 0 1\r\nb\r\nget ad\r\n"),
    ("replace", b"replace rp 0 0 1\r\na\r\nset rp 0 0 1\r\nb\r\nreplace rp 5 0 1\r\nc\r\nget rp\r\n"),
    ("append_prepend", b"append ap 0 0 1\r\nx\r\nset ap 3 0 2\r\nmm\r\nappend ap 9 0 2\r\n>>\r\nprepend ap 9 0 2\r\n<<\r\nget ap\r\n"),
    ("cas_flow", b"set cf 0 0 1\r\na\r\ngets cf\r\ncas cf 0 0 1 999\r\nb\r\ncas cfx 0 0 1 1\r\nb\r\nget cf\r\n"),
    ("cas_bad", b"cas cb 0 0 1\r\nx\r\ncas cb 0 0 1 abc\r\nx\r\n"),
    ("cas_noreply", b"cas cn 0 0 1 5 noreply\r\nx\r\n"),
    ("too_large", b"set tl 0 0 2000000\r\n" + b"x" * 2000000 + b"\r\nget tl\r\n"),
    ("too_large_noreply", b"set tln 0 0 1048576 noreply\r\n" + b"x" * 1048576 + b"\r\n"),
    ("too_large_drops_old", b"set tld 0 0 1\r\na\r\nset tld 0 0 1048576\r\n" + b"x" * 1048576 + b"\r\nget tld\r\n"),
    ("item_limit_edge", b"set ile 0 0 1048400\r\n" + b"y" * 1048400 + b"\r\nget ile\r\n"),
    # Delete.
    ("delete", b"set dl 0 0 1\r\na\r\ndelete dl\r\ndelete dl\r\nget dl\r\n"),
    ("delete_forms", b"delete dlf 0\r\ndelete dlf 5\r\ndelete dlf noreply\r\ndelete dlf 0 noreply\r\ndelete dlf 1 noreply\r\ndelete\r\ndelete a b c d\r\n"),
    # incr / decr.
    ("incr_decr", b"set n 0 0 2\r\n10\r\nincr n 5\r\ndecr n 100\r\nincr n 18446744073709551615\r\nincr n 2\r\nget n\r\n"),
    ("decr_pad", b"set dp 0 0 3\r\n100\r\ndecr dp 95\r\nget dp\r\nincr dp 1000\r\nget dp\r\n"),
    ("incr_errors", b"incr ie 1\r\nset ie 0 0 1\r\nx\r\nincr ie 1\r\nincr ie abc\r\nincr ie -1\r\nincr ie\r\ndecr ie 1 2\r\n"),
    ("incr_noreply", b"set inr 0 0 1\r\n1\r\nincr inr 1 noreply\r\nget inr\r\n"),
    ("incr_leading_space", b"set ils 0 0 3\r\n 12\r\nincr ils 1\r\n"),
    ("incr_empty", b"set iem 0 0 0\r\n\r\nincr iem 1\r\n"),
    # touch, gat.
    ("touch", b"touch tc 10\r\nset tc 0 0 1\r\nx\r\ntouch tc 10\r\ntouch tc abc\r\ntouch tc\r\ntouch tc 10 noreply\r\n"),
    ("gat", b"set gt 3 0 1\r\nx\r\ngat 100 gt gtx\r\ngats 100 gt\r\ngat abc gt\r\ngat\r\ngat 10\r\n"),
    # Misc.
    ("verbosity", b"verbosity\r\nverbosity 1\r\nverbosity 1 noreply\r\nverbosity abc\r\nverbosity 1 2 3\r\n"),
    ("flush_forms", b"flush_all abc\r\nflush_all 0 0 0\r\nflush_all noreply\r\n"),
    ("shutdown_not_enabled", b"shutdown\r\nshutdown graceful\r\nshutdown x\r\n"),
    # Meta.
    ("mn", b"mn\r\n"),
    ("mg_miss", b"mg mgm v\r\nmg mgm\r\nmg mgm k O123\r\nmg mgm v q\r\n"),
    ("mg_hit", b"set mgh 5 0 2\r\nhi\r\nmg mgh v f s t k O9 q\r\nmg mgh\r\nmg mgh s v\r\n"),
    ("mg_hit_flags", b"set mgf 0 0 1\r\nx\r\nmg mgf h l t\r\nmg mgf h l\r\nmg mgf u h\r\n"),
    ("mg_errors", b"mg\r\nmg mge v v\r\nmg mge zz\r\nmg mge Tabc\r\nmg " + b"k" * 251 + b" v\r\nmg mge " + b" ".join([b"O1"] * 1) + b" " + b"O" * 40 + b"\r\n"),
    ("mg_too_many_flags", b"mg mgt " + b" ".join(bytes([c]) for c in b"vfstkchlqu") + b" O1 O2 O3 O4 O5 O6 O7 O8 O9 O10\r\n"),
    ("mg_touch", b"set mgt2 0 0 1\r\nx\r\nmg mgt2 T100 t v\r\nmg mgt2 t\r\n"),
    ("mg_vivify", b"mg mgv N30 s t v c\r\nmg mgv N30 s t v\r\nmg mgv v\r\n"),
    ("mg_base64", b"ms Zm9v 2 b\r\nhi\r\nmg Zm9v b k v\r\nmg !!!! b v\r\nget foo\r\n"),
    ("ms_basic", b"ms msb 2\r\nhi\r\nms msb 2 c k O123 T0 F5\r\nho\r\nmg msb v f c\r\n"),
    ("ms_modes", b"ms msm 1 ME\r\na\r\nms msm 1 ME\r\nb\r\nms msm 1 MA\r\nc\r\nms msm 1 MP\r\nd\r\nms msmx 1 MR\r\ne\r\nms msm 1 MX\r\nf\r\nmg msm v\r\n"),
    ("ms_cas", b"ms msc 1 c\r\na\r\nms msc 1 C1\r\nb\r\nms msc2 1 C1\r\nb\r\nmg msc v\r\n"),
    ("ms_quiet", b"ms msq 1 q\r\na\r\nms msq 1 q ME\r\nb\r\nmg msq v\r\n"),
    ("ms_errors", b"ms\r\nms msx\r\nms msx xx\r\nms msx -1\r\nms msx 2 E5\r\nhi\r\nms msx 2 v v\r\nhi\r\nms msx 2 MEE\r\nhi\r\nms msx 1\r\nxyz\r\n"),
    ("ms_too_large", b"ms mstl 2000000\r\n" + b"z" * 2000000 + b"\r\nmg mstl v\r\n"),
    ("ms_invalid", b"ms msi 2 I\r\nhi\r\nmg msi v\r\n"),
    ("md", b"md mdx\r\nms mdx 1\r\na\r\nmd mdx q\r\nmd mdx q\r\nms mdx 1\r\na\r\nmd mdx C1 O5 k\r\nmd mdx v v\r\nmd\r\n"),
    ("md_invalidate", b"ms mdi 1 T100\r\na\r\nmd mdi I T30\r\nmg mdi v c t\r\nmg mdi v\r\nmg mdi v\r\n"),
    ("ma", b"ma maz\r\nma maz q\r\nma maz N0 J5 v t c\r\nma maz v\r\nma maz MD D10 v\r\nma maz MX\r\nma maz Dx\r\nma maz Jx N0\r\n"),
    ("ma_nonnumeric", b"ms man 1\r\nx\r\nma man\r\nma man O1 k\r\n"),
    ("ma_cas", b"ms mac 1\r\n1\r\nma mac C1 v\r\nma mac q\r\nmg mac v\r\n"),
    ("mg_recache", b"ms mgr 1 T100\r\na\r\nmg mgr R200 v\r\nmg mgr R200 v\r\nmg mgr v\r\n"),
]


@pytest.mark.parametrize("data", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_same_reply(same, data):
    same(data)


def test_quit_closes(same):
    same(b"set q1 0 0 1\r\nx\r\nget q1\r\nquit\r\nget q1\r\n", sentinel=False)


def test_http_request_closes(same):
    # No sentinel after it: bytes sent after the server's close would draw a reset, which
    # can discard the reply before it is read.
    same(b"GET / HTTP/1.1\r\n", sentinel=False)


def test_junk_line_closes(same):
    same(b"x" * 3000, sentinel=False)


def binary_packet(opcode, key=b"", extras=b"", value=b"", opaque=0x11223344):
    """A binary-protocol request: the 24-byte header, then extras, key and value."""
    body = extras + key + value
    return struct.pack(">BBHBBHIIQ", 0x80, opcode, len(key), len(extras), 0, 0, len(body), opaque, 0) + body


def test_binary_unknown_opcode_error(same):
    # memcached answers an opcode it does not implement with the binary "Unknown command"
    # error; Goblin answers every binary packet so, pipelined, bodies skipped.
    same(binary_packet(0xEE) + binary_packet(0xEE, value=b"abc", opaque=7) + binary_packet(0x20, opaque=8), sentinel=False)


def test_binary_bad_magic_closes(same):
    same(binary_packet(0xEE) + b"\x00" * 24, sentinel=False)


def test_binary_requests_get_an_error_reply(servers):
    """memcached serves binary GET and SET; Goblin, which speaks only the text protocols,
    answers each with a binary error (status 0x0081) carrying the request's opcode and opaque."""
    data = binary_packet(0x00, key=b"foo", opaque=1) + binary_packet(0x01, key=b"foo", extras=b"\0" * 8, value=b"bar", opaque=2)
    reply = servers[1].exchange(data + binary_packet(0x0A, opaque=3), sentinel=False)
    replies = []
    while reply:
        magic, opcode, _, _, _, status, length, opaque, _ = struct.unpack(">BBHBBHIIQ", reply[:24])
        replies.append((magic, opcode, status, opaque, reply[24 : 24 + length]))
        reply = reply[24 + length :]
    assert replies == [(0x81, op, 0x81, n, b"Unknown command") for op, n in [(0x00, 1), (0x01, 2), (0x0A, 3)]]


def test_split_reads(same):
    """A storage command and its data arriving in pieces."""
    same(b"", chunks=[b"se", b"t spl 0 0 10\r", b"\n01234", b"56789\r", b"\nget spl\r\n"])


def test_version_shape(both):
    mc, gb = both(b"version\r\n")
    assert re.fullmatch(rb"VERSION [0-9.]+\r\nMN\r\n", mc)
    assert re.fullmatch(rb"VERSION [0-9.]+[-\w.]*\r\nMN\r\n", gb)


def stats_of(reply):
    lines = reply.split(b"\r\n")
    assert lines[-3:] == [b"END", b"MN", b""]
    out = {}
    for line in lines[:-3]:
        m = re.fullmatch(rb"STAT (\S+) (.*)", line)
        assert m, line
        out[m.group(1).decode()] = m.group(2).decode()
    return out


COUNTERS = [
    "cmd_get", "cmd_set", "cmd_touch", "get_hits", "get_misses", "delete_hits", "delete_misses",
    "incr_hits", "incr_misses", "decr_hits", "decr_misses", "cas_hits", "cas_misses", "cas_badval",
    "touch_hits", "touch_misses", "total_items", "curr_items",
]


def test_stats_counters_move_alike(both):
    before = [stats_of(r) for r in both(b"stats\r\n")]
    for name in COUNTERS + ["limit_maxbytes", "curr_connections", "evictions", "bytes", "pid", "uptime"]:
        assert name in before[0] and name in before[1], name
    both(
        b"set stc 0 0 1\r\n1\r\nget stc stcx\r\nincr stc 1\r\nincr stcx 1\r\ndecr stc 1\r\n"
        b"gets stc\r\ncas stc 0 0 1 1\r\n2\r\ncas stcx 0 0 1 1\r\n2\r\ntouch stc 10\r\ntouch stcx 10\r\n"
        b"delete stc\r\ndelete stc\r\n"
    )
    after = [stats_of(r) for r in both(b"stats\r\n")]
    deltas = [{k: int(a[k]) - int(b[k]) for k in COUNTERS} for a, b in zip(after, before)]
    assert deltas[1] == deltas[0]


def test_stats_subcommands(both):
    mc, gb = both(b"stats reset\r\nstats nosuch\r\nstats detail\r\n")
    assert gb == mc


@pytest.mark.parametrize("size", [4095, 4096, 4097, 100_000, 1_000_000])
def test_tail_values(same, size):
    """Values at and above --ram-head (4K) on goblin go through the SSD tail."""
    value = bytes((i * 7 + size) % 251 for i in range(size))
    key = b"tail%d" % size
    same(b"set " + key + b" 3 0 %d\r\n" % size + value + b"\r\nget " + key + b"\r\n")
    same(b"get " + key + b" " + key + b" missing " + key + b"\r\nmg " + key + b" v s\r\n")
    same(b"append " + key + b" 0 0 3\r\nEND\r\nmg " + key + b" s v\r\n")


def test_tail_pipeline_order(same):
    """Tail reads complete out of order internally; replies must not."""
    big = b"B" * 50_000
    data = b"".join(b"set po%d 0 0 %d\r\n%s\r\n" % (i, len(big) + i, big + b"x" * i) for i in range(8))
    same(data)
    same(b"".join(b"get po%d\r\nget small\r\nmg po%d s\r\n" % (i, i) for i in range(8)))


def test_expiry_relative_absolute_negative(same):
    # An absolute time 3 s ahead: memcached's seconds tick on its own monotonic clock, whose
    # phase is not the wall clock's, so one only 1 s ahead was at times already past for it.
    now = int(time.time())
    same(
        b"set ex1 0 1 1\r\na\r\nset ex2 0 %d 1\r\nb\r\nset ex3 0 -1 1\r\nc\r\nset ex4 0 100 1\r\nd\r\n"
        b"set ex5 0 %d 1\r\ne\r\nget ex1 ex2 ex3 ex4 ex5\r\n" % (now + 3, now - 10)
    )
    time.sleep(4.2)
    same(b"get ex1 ex2 ex3 ex4 ex5\r\n")
    same(b"touch ex4 1\r\n")
    time.sleep(2.2)
    same(b"get ex4\r\n")


def test_gat_expiry(same):
    same(b"set gex 0 0 1\r\na\r\ngat 1 gex\r\n")
    time.sleep(2.2)
    same(b"get gex\r\n")


def test_flush_all(same):
    same(b"set fa1 0 0 1\r\na\r\nflush_all\r\nget fa1\r\nset fa2 0 0 1\r\nb\r\nflush_all 2\r\nget fa2\r\n")
    time.sleep(2.5)
    same(b"get fa2\r\nset fa3 0 0 1\r\nc\r\nget fa3\r\n")


def test_cas_sequence_after_everything(same):
    """CAS values come from the same counter sequence as memcached's."""
    same(b"set cseq 0 0 1\r\na\r\ngets cseq\r\nmg cseq c\r\n")
