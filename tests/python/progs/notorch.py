"""A Python program that never imports torch: under gprof-dl it must run as
it does bare, and the gprof_dl hooks must not import torch for it."""
import json
import sys

print(json.dumps({"sum": sum(range(1000)), "argv": sys.argv[1:]}))
print("torch imported:", "torch" in sys.modules)
sys.exit(3)
