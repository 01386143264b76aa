import time, threading, sys
import numpy as np
from rmpeer.traffic import patterns, bytecheck
from rmpeer.shim.libc import ffi, libc
from rmpeer.machine import slices
local = threading.local()

def lazy_equal(actual_u8, seed, kind, owner, sub):
    n = actual_u8.size
    pa = ffi.cast("unsigned char *", ffi.from_buffer(actual_u8))
    mark = np.uint64(patterns.tag(seed, kind, owner))
    index = patterns.counting(n // 8)
    def work(at, k):
        buf = getattr(local, "buf", None)
        if buf is None or buf.size != sub // 8:
            buf = local.buf = np.empty(sub // 8, np.uint64)
            local.ptr = ffi.cast("unsigned char *", ffi.from_buffer(buf))
        for off in range(at, at + k, sub):
            m = min(sub, at + k - off)
            np.add(index[off // 8:(off + m) // 8], mark, out=buf[:m // 8])
            if libc().memcmp(pa + off, local.ptr, m):
                return 1
        return 0
    return all(r == 0 for r in slices.each(work, n, bytecheck.COMPARE_SLICE))

def ms(f, reps=5):
    best = []
    for _ in range(reps):
        t = time.perf_counter(); r = f(); best.append(1e3 * (time.perf_counter() - t))
    return f"{min(best):.2f} ms (median {sorted(best)[len(best)//2]:.2f}) -> {r}"

N = 64 << 20
t = time.perf_counter(); patterns.counting(N // 8); print(f"counting 64 MiB: {1e3*(time.perf_counter()-t):.1f} ms")
t = time.perf_counter(); ps = [patterns.make(953, k, o, N) for o in range(16) for k in (1, 2)]
print(f"32 patterns of 64 MiB made fresh: {1e3*(time.perf_counter()-t):.1f} ms")
actual = np.array(ps[6]).view(np.uint8)     # kind 1, owner 3
want = ps[6]
print("compare (materialized, bytecheck.compare):", ms(lambda: bytecheck.compare(actual, want)))
for sub in (4 << 20, 1 << 20, 256 << 10):
    print(f"lazy compare sub {sub >> 10} KiB:", ms(lambda: lazy_equal(actual, 953, 1, 3, sub)))
bad = actual.copy(); bad[N - 5] ^= 1
print("lazy on a flipped byte:", lazy_equal(bad, 953, 1, 3, 1 << 20), "materialized:", bytecheck.compare(bad, want) is None)
# generating straight into a destination buffer (as a staging fill would), against memcpy of a made pattern
dst = np.empty(N // 8, np.uint64); dst[:] = 0
mark = np.uint64(patterns.tag(953, 2, 5)); index = patterns.counting(N // 8)
print("fill by generating into dst:", ms(lambda: slices.each(lambda at, k: np.add(index[at:at + k], mark, out=dst[at:at + k]), N // 8, slices.SLICE // 8) and None))
pd = ffi.cast("unsigned char *", ffi.from_buffer(dst)); pw = ffi.cast("unsigned char *", ffi.from_buffer(want))
print("fill by memcpy of a made pattern:", ms(lambda: slices.each(lambda at, k: libc().memcpy(pd + at, pw + at, k), N, slices.SLICE) and None))
