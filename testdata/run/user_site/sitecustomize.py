# The user's own sitecustomize: gpu-doctor's hook must chain to it, not replace it.
import sys

sys.stderr.write("user sitecustomize ran\n")
