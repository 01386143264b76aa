"""The seven libc calls the shim needs, through cffi in ABI mode (no compiler on the host)."""

from __future__ import annotations

import os

import cffi

ffi = cffi.FFI()
ffi.cdef("""
    int open(const char *path, int flags, ...);
    int close(int fd);
    int ioctl(int fd, unsigned long request, ...);
    void *mmap(void *addr, size_t length, int prot, int flags, int fd, long offset);
    int munmap(void *addr, size_t length);
    int memcmp(const void *a, const void *b, size_t n);
    void *memcpy(void *dst, const void *src, size_t n);
""")
_libc = None

MAP_FAILED = 2**64 - 1  # (void *) -1 as an address
PROT_RW = 0x1 | 0x2      # PROT_READ | PROT_WRITE
MAP_SHARED = 0x01
O_RDWR_CLOEXEC = os.O_RDWR | os.O_CLOEXEC


def libc():
    """libc, loaded on first use so that importing rmpeer never touches it."""
    global _libc
    if _libc is None:
        _libc = ffi.dlopen(None)
    return _libc


def address(cdata) -> int:
    return int(ffi.cast("uintptr_t", cdata))
