# scratch: in-process NVML vs nvidia-smi timings (not committed)
import subprocess, sys, threading, time
sys.path.insert(0, "/tmp/site")
import cffi
t0 = time.perf_counter()
ffi = cffi.FFI()
ffi.cdef("""
typedef struct nvmlDevice_st* nvmlDevice_t;
int nvmlInit_v2(void);
int nvmlShutdown(void);
const char* nvmlErrorString(int result);
int nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock);
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *clock);
int nvmlDeviceGetPerformanceState(nvmlDevice_t device, int *pState);
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons);
int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
""")
t1 = time.perf_counter()
lib = ffi.dlopen("libnvidia-ml.so.1")
t2 = time.perf_counter()
rc = lib.nvmlInit_v2()
t3 = time.perf_counter()
print(f"cdef {1e3*(t1-t0):.1f} ms, dlopen {1e3*(t2-t1):.1f} ms, nvmlInit_v2 {1e3*(t3-t2):.1f} ms rc {rc}")
bus = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader"], capture_output=True, text=True).stdout.split()
for i in range(5):
    t = time.perf_counter()
    out = {}
    for b in bus:
        h = ffi.new("nvmlDevice_t *")
        r1 = lib.nvmlDeviceGetHandleByPciBusId_v2(b.encode(), h)
        v = ffi.new("unsigned int *"); p = ffi.new("int *"); m = ffi.new("unsigned long long *")
        g = [lib.nvmlDeviceGetClockInfo(h[0], k, v) or v[0] for k in (0, 1, 2)]
        mx = lib.nvmlDeviceGetMaxClockInfo(h[0], 0, v) or v[0]
        ps = lib.nvmlDeviceGetPerformanceState(h[0], p) or p[0]
        ev = lib.nvmlDeviceGetCurrentClocksEventReasons(h[0], m) or m[0]
        pw = lib.nvmlDeviceGetPowerUsage(h[0], v) or v[0]
        pl = lib.nvmlDeviceGetEnforcedPowerLimit(h[0], v) or v[0]
        out[b] = (r1, g, mx, ps, hex(ev), pw, pl)
    print(f"in-process reading {1e3*(time.perf_counter()-t):.2f} ms: {out}")
t = time.perf_counter(); lib.nvmlShutdown(); print(f"shutdown {1e3*(time.perf_counter()-t):.1f} ms")
q = "pci.bus_id,clocks.gr,clocks.sm,clocks.mem,pstate,clocks.max.gr,clocks_event_reasons.active,power.draw,enforced.power.limit"
for i in range(5):
    t = time.perf_counter()
    o = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout.strip()
    print(f"nvidia-smi {1e3*(time.perf_counter()-t):.1f} ms: {o}")
# in a thread beside a CPU-bound import-like loop
def init():
    global ti
    s = time.perf_counter(); lib.nvmlInit_v2(); ti = time.perf_counter() - s
t = time.perf_counter(); th = threading.Thread(target=init); th.start()
x = 0
for i in range(3_000_000): x += i
tcpu = time.perf_counter() - t; th.join(); print(f"init in a thread {1e3*ti:.1f} ms beside {1e3*tcpu:.1f} ms of CPU work; total {1e3*(time.perf_counter()-t):.1f} ms")
