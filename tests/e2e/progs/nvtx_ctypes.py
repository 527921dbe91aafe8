"""NVTX from Python through ctypes, as a user without any NVTX package would:
three outer ranges with two inner ranges each, and a mark."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.nvtxRangePushA.argtypes = [ctypes.c_char_p]
lib.nvtxMarkA.argtypes = [ctypes.c_char_p]
for _ in range(3):
    lib.nvtxRangePushA(b"py-outer")
    for _ in range(2):
        lib.nvtxRangePushA(b"py-inner")
        lib.nvtxRangePop()
    lib.nvtxRangePop()
lib.nvtxMarkA(b"py-mark")
print("ctypes done")
