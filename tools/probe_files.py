# tools/probe_files.py [FOLDER]: 1132 small files created in a fresh folder (a full run's report), 1 thread against 2 and 4
# (issue 46: whether writing the results on several threads gains anything on a host's file system)
import json, os, shutil, statistics, sys, time
from concurrent.futures import ThreadPoolExecutor
root = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
entries = [json.dumps({"uuid": f"{i:032x}", "name": "x" * 200, "labels": [{"name": "a", "value": "b"}] * 20})
           for i in range(1132)]
def one(fd, name, s):
    f = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd)
    os.write(f, s.encode()); os.close(f)
res = {}
for trial in range(5):
    for threads in (1, 2, 4):
        d = f"{root}/probe-files-{threads}"; shutil.rmtree(d, ignore_errors=True); os.mkdir(d)
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        t = time.perf_counter()
        if threads == 1:
            for i, s in enumerate(entries): one(fd, f"{i}-result.json", s)
        else:
            with ThreadPoolExecutor(threads) as ex:
                list(ex.map(lambda a: one(fd, f"{a[0]}-result.json", a[1]), enumerate(entries)))
        res.setdefault(threads, []).append((time.perf_counter() - t) * 1000)
        os.close(fd)
for k, v in res.items():
    print(f"probe-files: {root}: {k} thread(s): median {statistics.median(v):.1f} ms (min {min(v):.1f}, max {max(v):.1f})")
for threads in res:
    shutil.rmtree(f"{root}/probe-files-{threads}", ignore_errors=True)
