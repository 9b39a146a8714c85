#!/usr/bin/env python3
# bench/perf_breakdown.py: where a server's CPU time goes, from
# `perf script -F tid,ip,sym` output (bench/profile_w1.sh, docs/bench.md
# "Where the time goes"). Each sample is put in the first category that matches a
# frame, walking from the leaf up; prints the shares and the split by thread.
# Usage: perf script -i perf.data -F tid,ip,sym > s.txt; python3 bench/perf_breakdown.py s.txt
import sys, re, collections
cats = [  # (category, regex on a frame's symbol), checked from the leaf up
 ("fdatasync (log thread)", r"fdatasync|PosixWritableFile::Sync"),
 ("log append, RocksDB other", r"rocksdb::"),
 ("reply write(2)", r"flush_output|Responder::finish|uv_try_write"),
 ("socket read(2)", r"uv__read|__GI___libc_read|^read$"),
 ("epoll_wait", r"epoll_wait|uv__io_poll"),
 ("thread wake-ups (futex, async)", r"futex|uv_async_send|uv__async|eventfd|condition_variable|pthread_cond"),
 ("RESP parse", r"resp::Parser"),
 ("command codec (log encode/decode)", r"command_codec|ByteWriter|ByteReader|encode_command|decode_command"),
 ("state machine apply", r"core::StateMachine|core::detail|apply_batch|apply_one"),
 ("command dispatch / handlers", r"server::.*lock_|run_handler|CommandTable|command_table|propose|dispatch_command"),
 ("malloc / free", r"malloc|_int_free|cfree|operator new|operator delete"),
]
samples = collections.Counter(); per_thread = collections.Counter(); total = 0
stack = []; tid = None
def flush():
    global total
    if tid is None: return
    total += 1
    per_thread[tid] += 1
    for frame in stack:
        for name, rx in cats:
            if re.search(rx, frame):
                samples[name] += 1; return
    samples["other (kernel scheduling, libuv, timers, ...)"] += 1
for line in open(sys.argv[1]):
    if not line.startswith("\t") and line.strip():
        flush(); tid = line.split()[0]; stack = []
    elif line.strip():
        parts = line.strip().split(None, 1)
        stack.append(parts[1] if len(parts) > 1 else "")
flush()
print(f"{total} samples")
for name, n in samples.most_common(): print(f"  {100*n/total:5.1f}%  {name}")
print("per thread:", {t: f"{100*n/total:.0f}%" for t, n in per_thread.most_common()})
