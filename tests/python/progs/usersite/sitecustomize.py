# A user's own sitecustomize, found through PYTHONPATH: gprof-dl's must chain
# to it, so that its side effects are there as without gprof-dl.
import builtins
import os

builtins.USER_SITECUSTOMIZE = os.getpid()
print("user sitecustomize ran", flush=True)
