"""The seven libc calls the shim makes, as C declarations: read by rmpeer/shim/libc.py (a
checkout: cffi parses them when rmpeer starts) and by setup.py (a wheel: parsed once when it is
built). Plain text and nothing else: setup.py reads this file without importing rmpeer."""

DECLARATIONS = """
    int open(const char *path, int flags, ...);
    int close(int fd);
    int ioctl(int fd, unsigned long request, ...);
    void *mmap(void *addr, size_t length, int prot, int flags, int fd, long offset);
    int munmap(void *addr, size_t length);
    int memcmp(const void *a, const void *b, size_t n);
    void *memcpy(void *dst, const void *src, size_t n);
"""
