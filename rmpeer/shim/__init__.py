"""The shim: open, ioctl, mmap through cffi, every call recorded (live) or served (replay)."""
